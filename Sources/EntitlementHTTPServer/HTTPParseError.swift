/// Why a request was refused before it reached a handler, with the status the server answers
/// (after which it closes the connection).
package struct HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The status the server answers with.
    package let status: Int
    /// A sentence for the error page and the access log.
    package let description: String
    /// The kind's name, which tells two kinds with the same status and words apart.
    private let name: String

    private init(_ name: String, _ status: Int, _ description: String) {
        self.name = name
        self.status = status
        self.description = description
    }

    /// The request line is not `METHOD SP origin-form SP HTTP/1.x` (400).
    package static let malformedRequestLine = HTTPParseError("malformedRequestLine", 400, "malformed request line")
    /// The request line is longer than the limit (414).
    package static let requestLineTooLong = HTTPParseError("requestLineTooLong", 414, "request line too long")
    /// A header line is not `name: value`, has a space before the colon, is folded, or holds a
    /// control character (400).
    package static let malformedHeader = HTTPParseError("malformedHeader", 400, "malformed header field")
    /// The header section is larger than the limit or has too many fields (431).
    package static let headersTooLarge = HTTPParseError("headersTooLarge", 431, "header section too large")
    /// `Content-Length` is not a number, or is sent twice with different values (400).
    package static let badContentLength = HTTPParseError("badContentLength", 400, "bad Content-Length")
    /// The body is larger than the limit (413).
    package static let bodyTooLarge = HTTPParseError("bodyTooLarge", 413, "body too large")
    /// HTTP/1.1 without exactly one `Host` (400, RFC 9112 §3.2).
    package static let badHost = HTTPParseError("badHost", 400, "HTTP/1.1 needs exactly one Host header")
    /// A transfer coding other than `chunked` (501).
    package static let transferEncodingNotSupported = HTTPParseError("transferEncodingNotSupported", 501, "only the chunked transfer coding is supported")
    /// `Transfer-Encoding` beside `Content-Length`, in HTTP/1.0, or not ending in `chunked`: the body's
    /// length cannot be known reliably (400, RFC 9112 §6.1, §6.3).
    package static let badTransferEncoding = HTTPParseError("badTransferEncoding", 400, "Transfer-Encoding must be chunked alone, in HTTP/1.1, without Content-Length")
    /// A chunked body that breaks its grammar: a bad chunk size, a chunk not followed by CRLF, a bad
    /// trailer field (400).
    package static let malformedChunkedBody = HTTPParseError("malformedChunkedBody", 400, "malformed chunked body")
    /// A chunked body whose framing — chunk-size lines, their extensions, the line ends — is larger than a
    /// body may be (413): a body in one-byte chunks with long extensions would make the server hold a
    /// thousand times the body's bytes.
    package static let chunkFramingTooLarge = HTTPParseError(
        "chunkFramingTooLarge", 413, "the chunked body's framing (chunk-size lines and extensions) is larger than a body may be")
    /// A protocol version other than HTTP/1.0 or HTTP/1.1 (505).
    package static let versionNotSupported = HTTPParseError("versionNotSupported", 505, "only HTTP/1.0 and HTTP/1.1 are served")
    /// The client did not send a whole request in time (408).
    package static let timedOut = HTTPParseError("timedOut", 408, "the request did not arrive in time")
}
