/// Why a request was refused before it reached a handler, with the status the server answers
/// (after which it closes the connection).
public enum HTTPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The request line is not `METHOD SP origin-form SP HTTP/1.x` (400).
    case malformedRequestLine
    /// The request line is longer than the limit (414).
    case requestLineTooLong
    /// A header line is not `name: value`, has a space before the colon, is folded, or holds a
    /// control character (400).
    case malformedHeader
    /// The header section is larger than the limit or has too many fields (431).
    case headersTooLarge
    /// `Content-Length` is not a number, or is sent twice with different values (400).
    case badContentLength
    /// The body is larger than the limit (413).
    case bodyTooLarge
    /// HTTP/1.1 without exactly one `Host` (400, RFC 9112 §3.2).
    case badHost
    /// A transfer coding other than `chunked` (501).
    case transferEncodingNotSupported
    /// `Transfer-Encoding` beside `Content-Length`, in HTTP/1.0, or not ending in `chunked`: the body's
    /// length cannot be known reliably (400, RFC 9112 §6.1, §6.3).
    case badTransferEncoding
    /// A chunked body that breaks its grammar: a bad chunk size, a chunk not followed by CRLF, a bad
    /// trailer field (400).
    case malformedChunkedBody
    /// A protocol version other than HTTP/1.0 or HTTP/1.1 (505).
    case versionNotSupported
    /// The client did not send a whole request in time (408).
    case timedOut

    /// The status the server answers with.
    public var status: Int {
        switch self {
        case .malformedRequestLine, .malformedHeader, .badContentLength, .badHost, .badTransferEncoding, .malformedChunkedBody: 400
        case .requestLineTooLong: 414
        case .headersTooLarge: 431
        case .bodyTooLarge: 413
        case .transferEncodingNotSupported: 501
        case .versionNotSupported: 505
        case .timedOut: 408
        }
    }

    /// A sentence for the error page and the access log.
    public var description: String {
        switch self {
        case .malformedRequestLine: "malformed request line"
        case .requestLineTooLong: "request line too long"
        case .malformedHeader: "malformed header field"
        case .headersTooLarge: "header section too large"
        case .badContentLength: "bad Content-Length"
        case .bodyTooLarge: "body too large"
        case .badHost: "HTTP/1.1 needs exactly one Host header"
        case .transferEncodingNotSupported: "only the chunked transfer coding is supported"
        case .badTransferEncoding: "Transfer-Encoding must be chunked alone, in HTTP/1.1, without Content-Length"
        case .malformedChunkedBody: "malformed chunked body"
        case .versionNotSupported: "only HTTP/1.0 and HTTP/1.1 are served"
        case .timedOut: "the request did not arrive in time"
        }
    }
}
