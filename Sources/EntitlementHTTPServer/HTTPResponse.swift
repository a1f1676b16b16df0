/// An answer the server writes: status, header fields and a `Content-Length` body.
package struct HTTPResponse: Sendable, Hashable {
    /// How the answer ends on the socket.
    package enum Ending: Sendable, Hashable {
        /// The whole answer is written.
        case complete
        /// The head and the first `bodyBytes` bytes of the body are written, then the connection is
        /// reset (a fault for client tests: "connection reset mid-body").
        case resetMidBody(bodyBytes: Int)
    }

    /// The status code.
    package var status: Int
    /// Header fields; `Content-Length`, `Date` and `Connection` are added when written.
    package var headers: HTTPHeaders
    /// The body.
    package var body: [UInt8]
    /// How it ends.
    package var ending: Ending

    /// Creates an answer.
    package init(status: Int, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = [], ending: Ending = .complete) {
        self.status = status
        self.headers = headers
        self.body = body
        self.ending = ending
    }

    /// A `text/plain; charset=utf-8` answer.
    package static func text(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "text/plain; charset=utf-8")]), body: Array(text.utf8))
    }

    /// A `text/html; charset=utf-8` answer.
    package static func html(_ status: Int, _ html: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "text/html; charset=utf-8")]), body: Array(html.utf8))
    }

    /// A `302 Found` to `location`.
    package static func redirect(_ location: String) -> HTTPResponse {
        HTTPResponse(status: 302, headers: HTTPHeaders([("Location", location)]))
    }

    /// The bytes written for this answer: the head (with `Content-Length`, `Date` and `Connection`)
    /// and, unless `includeBody` is false (a `HEAD` request), the body. An answer with a header field
    /// that cannot be written safely — a name that is not a token, a value holding CR, LF, NUL or another
    /// control character (response splitting: a reflected value starting a header or a body of its own)
    /// — is never written: a `500` saying so goes out instead, without the field.
    package func serialized(keepAlive: Bool, date: String, includeBody: Bool = true) -> [UInt8] {
        guard headers.allSatisfy({ HTTPHeaders.isToken($0.name) && HTTPHeaders.isSafeValue($0.value) }) else {
            return HTTPResponse.text(500, "The answer held a header field that cannot be sent safely; it was not sent.")
                .serialized(keepAlive: keepAlive, date: date, includeBody: includeBody)
        }
        var head = "HTTP/1.1 \(status) \(Self.reason(status))\r\n"
        for field in headers where !Self.managed.contains(field.name.lowercased()) {
            head += "\(field.name): \(field.value)\r\n"
        }
        if status >= 200, status != 204, status != 304 { head += "Content-Length: \(body.count)\r\n" }
        head += "Date: \(date)\r\nConnection: \(keepAlive ? "keep-alive" : "close")\r\n\r\n"
        var bytes = Array(head.utf8)
        if includeBody { bytes += body }
        return bytes
    }

    private static let managed: Set<String> = ["content-length", "date", "connection", "transfer-encoding"]

    /// The reason phrase for `status`.
    package static func reason(_ status: Int) -> String {
        switch status {
        case 100: "Continue"
        case 200: "OK"
        case 201: "Created"
        case 204: "No Content"
        case 302: "Found"
        case 400: "Bad Request"
        case 401: "Unauthorized"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 405: "Method Not Allowed"
        case 408: "Request Timeout"
        case 413: "Content Too Large"
        case 414: "URI Too Long"
        case 415: "Unsupported Media Type"
        case 429: "Too Many Requests"
        case 431: "Request Header Fields Too Large"
        case 500: "Internal Server Error"
        case 501: "Not Implemented"
        case 502: "Bad Gateway"
        case 503: "Service Unavailable"
        case 504: "Gateway Timeout"
        case 505: "HTTP Version Not Supported"
        default: "Status \(status)"
        }
    }
}
