/// One HTTP/1.1 request as the server received it: a request line, header fields and a
/// `Content-Length` body.
package struct HTTPRequest: Sendable, Hashable {
    /// The method (`GET`, `POST`, …), case as sent (methods are case-sensitive).
    package var method: String
    /// The request target in origin form (`/api/v2/sp/sessions?x=1`).
    package var target: String
    /// `HTTP/1.1` or `HTTP/1.0`.
    package var version: String
    /// The header fields.
    package var headers: HTTPHeaders
    /// The body (empty without `Content-Length`).
    package var body: [UInt8]

    /// Creates a request.
    package init(method: String, target: String, version: String = "HTTP/1.1", headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.method = method
        self.target = target
        self.version = version
        self.headers = headers
        self.body = body
    }

    /// The target's path, before any `?`.
    package var path: Substring { target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0] }

    /// The target's query, after the first `?` (empty when there is none).
    package var query: Substring {
        guard let mark = target.firstIndex(of: "?") else { return "" }
        return target[target.index(after: mark)...]
    }

    /// Whether the connection stays open after the answer: HTTP/1.1 unless `Connection: close`,
    /// HTTP/1.0 only with `Connection: keep-alive` (RFC 9112 §9.3).
    package var keepsAlive: Bool {
        let options = headers.values("Connection").flatMap { $0.lowercased().split(separator: ",") }
            .map { $0.trimmingCharacters(in: " \t") }
        if options.contains("close") { return false }
        return version == "HTTP/1.1" || options.contains("keep-alive")
    }
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return slice
    }
}
