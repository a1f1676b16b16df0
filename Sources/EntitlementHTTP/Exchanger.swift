import EntitlementEngine

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// How one exchange ended, whichever stack ran it.
package enum ExchangeOutcome: Sendable {
    /// The whole answer: its status, its `Content-Type` (empty when it had none) and its body.
    case answered(status: Int, contentType: String, body: [UInt8])
    /// The answer's body passed the limit (``Exchanger/bodyLimit``); reading stopped there.
    case tooLarge(status: Int)
    /// The deadline passed before the answer was whole.
    case timedOut
    /// No HTTP answer (the connection failed, the request could not be sent as written, or the calling
    /// task was cancelled: `network("cancelled")`), described without the URL, which may hold a secret.
    case failed(BackendError)
}

/// What a transport's exchanges run on: curl's multi handle on a thread of its own, or a `URLSession`
/// with a ``BoundedExchanges`` delegate. Either way each exchange ends within its deadline, with the
/// calling task's cancellation, and reads at most the body limit.
package enum Exchanger: Sendable {
    case curl(CurlExchanges)
    case urlSession(URLSession, BoundedExchanges)

    /// The exchanger for `stack`, and the stack it runs: `URLSession` when libcurl cannot be opened.
    /// At most `connectionsPerHost` connections to one host (nil: the stack's own default).
    package static func make(_ stack: HTTPStack, bodyLimit: Int, timeout: Duration, connectionsPerHost: Int?) -> (Exchanger, HTTPStack) {
        if stack == .libcurl, let curl = CurlExchanges(bodyLimit: bodyLimit, connectionsPerHost: connectionsPerHost ?? 0) {
            return (.curl(curl), .libcurl)
        }
        let exchanges = BoundedExchanges(bodyLimit: bodyLimit)
        return (.urlSession(exchanges.session(timeout: timeout, connectionsPerHost: connectionsPerHost), exchanges), .urlSession)
    }

    /// The largest body read.
    package var bodyLimit: Int {
        switch self {
        case .curl(let curl): curl.bodyLimit
        case .urlSession(_, let exchanges): exchanges.bodyLimit
        }
    }

    /// Lets the exchanges in flight end and frees what runs them.
    package func close() {
        switch self {
        case .curl(let curl): curl.stop()
        case .urlSession(let session, _): session.finishTasksAndInvalidate()
        }
    }

    /// One exchange of `request`, ended by `timeout` or the calling task's cancellation. A request that
    /// could not be sent as written (``check(_:)``) is refused without being sent.
    package func exchange(_ request: V2OutgoingRequest, within timeout: Duration) async -> ExchangeOutcome {
        if let problem = Self.check(request) { return .failed(problem) }
        switch self {
        case .curl(let curl):
            let headers = request.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }
            let sent = CurlExchanges.Request(method: request.method, url: request.url, headers: headers, body: request.body)
            switch await curl.exchange(sent, within: timeout) {
            case .answered(let status, let contentType, let body): return .answered(status: status, contentType: contentType, body: body)
            case .tooLarge(let status): return .tooLarge(status: status)
            case .timedOut: return .timedOut
            case .cancelled: return .failed(.network("cancelled"))
            case .failed(let code): return .failed(Self.failure(curl: code))
            }
        case .urlSession(let session, let exchanges):
            guard let url = URL(string: request.url) else { return .failed(.network("the request's URL is not valid")) }
            var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData, timeoutInterval: BoundedExchanges.seconds(timeout))
            urlRequest.httpMethod = request.method
            for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
            if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
            switch await exchanges.exchange(urlRequest, on: session, within: timeout) {
            case .answered(let response, let data):
                return .answered(
                    status: response.statusCode, contentType: response.value(forHTTPHeaderField: "Content-Type") ?? "", body: Array(data))
            case .tooLarge(let response): return .tooLarge(status: response.statusCode)
            case .timedOut: return .timedOut
            case .failed(let code): return .failed(Self.failure(code))
            }
        }
    }

    /// Why a request cannot be sent as written, or nil: a URL that does not parse or holds a NUL, or a
    /// header whose name is not a field name or whose value could end the line (CR, LF, NUL) — curl
    /// would send such a line as it is.
    static func check(_ request: V2OutgoingRequest) -> BackendError? {
        guard URL(string: request.url) != nil, !request.url.utf8.contains(0) else { return .network("the request's URL is not valid") }
        for (name, value) in request.headers {
            let nameIsToken = !name.isEmpty && name.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }
            guard nameIsToken, !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                return .network("a header field is not valid")
            }
        }
        return nil
    }

    /// A `URLSession` failure, described without the URL (it may hold a session code).
    static func failure(_ code: URLError.Code?) -> BackendError {
        guard let code else { return .network("the request failed") }
        switch code {
        case .timedOut: return .timeout
        case .cancelled: return .network("cancelled")
        case .cannotConnectToHost: return .network("connection refused")
        case .networkConnectionLost: return .network("connection reset")
        case .cannotFindHost, .dnsLookupFailed: return .network("unknown host")
        case .notConnectedToInternet: return .network("not connected")
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate, .serverCertificateNotYetValid:
            return .network("TLS failure")
        default: return .network("connection failed (URLError \(code.rawValue))")
        }
    }

    /// A curl failure (`CURLcode`), in the words a `URLSession` failure gets (``failure(_:)``).
    static func failure(curl code: Int32) -> BackendError {
        switch code {
        case CurlExchanges.refusedCode: .network("curl refused the request")
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
