import EntitlementEngine

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// The HTTP client a transport's exchanges run on.
public enum HTTPStack: Sendable, Hashable, CustomStringConvertible {
    /// libcurl's multi interface, driven by one thread of the transport's own (the libcurl
    /// FoundationNetworking links, opened at run time): no Dispatch source, no `URLSession`.
    case libcurl
    /// Foundation's `URLSession` (on Linux, FoundationNetworking's, itself on libcurl with Dispatch sources).
    case urlSession

    /// `libcurl` on Linux, where FoundationNetworking's `URLSession` is reported to crash in libdispatch on
    /// connection teardown, cancellation and timeouts (swift-corelibs-foundation #4791, #5469);
    /// `urlSession` on Apple's systems.
    public static var platformDefault: HTTPStack {
        #if canImport(FoundationNetworking)
            .libcurl
        #else
            .urlSession
        #endif
    }

    /// `libcurl` or `URLSession`.
    public var description: String {
        switch self {
        case .libcurl: "libcurl"
        case .urlSession: "URLSession"
        }
    }
}

/// What a transport's exchanges run on: curl's multi handle on a thread of its own, or a `URLSession`
/// with a ``BoundedExchanges`` delegate. Either way each exchange ends within its deadline, with the
/// calling task's cancellation, and reads at most the body limit.
enum Exchanger: Sendable {
    case curl(CurlExchanges)
    case urlSession(URLSession, BoundedExchanges)

    /// The exchanger for `stack`, and the stack it runs: `URLSession` when libcurl cannot be opened.
    static func make(_ stack: HTTPStack, bodyLimit: Int, timeout: Duration, connectionsPerHost: Int) -> (Exchanger, HTTPStack) {
        if stack == .libcurl, let curl = CurlExchanges(bodyLimit: bodyLimit, connectionsPerHost: connectionsPerHost) {
            return (.curl(curl), .libcurl)
        }
        let exchanges = BoundedExchanges(bodyLimit: bodyLimit)
        return (.urlSession(exchanges.session(timeout: timeout, connectionsPerHost: connectionsPerHost), exchanges), .urlSession)
    }

    /// Lets the exchanges in flight end and frees what runs them.
    func close() {
        switch self {
        case .curl(let curl): curl.stop()
        case .urlSession(let session, _): session.finishTasksAndInvalidate()
        }
    }

    /// One exchange of `request`, ended by `timeout` or the calling task's cancellation: an HTTP answer
    /// (a body over the limit is a ``V2Response/bodyProblem``) or a failure described without the URL.
    func exchange(_ request: V2OutgoingRequest, within timeout: Duration) async throws(BackendError) -> V2Response {
        switch self {
        case .curl(let curl):
            let headers = request.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            let sent = CurlExchanges.Request(method: request.method, url: request.url, headers: headers, body: request.body)
            switch await curl.exchange(sent, within: timeout) {
            case .answered(let status, let contentType, let body):
                return URLSessionV2Transport.read(status: status, contentType: contentType, body: body)
            case .tooLarge(let status): return Self.tooLarge(status, limit: curl.bodyLimit)
            case .timedOut: throw .timeout
            case .cancelled: throw .network("cancelled")
            case .failed(let code, _): throw Self.failure(curl: code)
            }
        case .urlSession(let session, let exchanges):
            guard let url = URL(string: request.url) else { throw .network("the request's URL is not valid") }
            var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: BoundedExchanges.seconds(timeout))
            urlRequest.httpMethod = request.method
            for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
            if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
            switch await exchanges.exchange(urlRequest, on: session, within: timeout) {
            case .answered(let response, let data):
                return URLSessionV2Transport.read(
                    status: response.statusCode, contentType: response.value(forHTTPHeaderField: "Content-Type") ?? "", body: Array(data))
            case .tooLarge(let response): return Self.tooLarge(response.statusCode, limit: exchanges.bodyLimit)
            case .timedOut: throw .timeout
            case .failed(let code): throw URLSessionV2Transport.failure(code)
            }
        }
    }

    private static func tooLarge(_ status: Int, limit: Int) -> V2Response {
        V2Response(status: status, body: nil, bodyProblem: "the body is larger than \(limit) bytes")
    }

    /// A curl failure (`CURLcode`), in the words `URLSession`'s get (``URLSessionV2Transport/failure(_:)``).
    static func failure(curl code: Int32) -> BackendError {
        switch code {
        case 1, 3: .network("the request's URL is not valid")  // unsupported protocol, malformed URL
        case 5, 6: .network("unknown host")  // proxy or host not resolved
        case 7: .network("connection refused")
        case 16, 18, 52, 55, 56, 92: .network("connection reset")  // HTTP/2 framing or stream, partial body, nothing, send or receive failed
        case 28: .timeout
        case 35, 53, 54, 58, 59, 60, 64, 66, 77, 80, 82, 83, 90, 91, 98: .network("TLS failure")
        default: .network("connection failed (curl \(code))")
        }
    }
}
