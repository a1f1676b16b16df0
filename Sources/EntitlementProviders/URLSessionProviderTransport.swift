import EntitlementEngine
import EntitlementHTTP

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// A provider's HTTP exchanges over `URLSession`: no cookies, no cache, no redirects followed (one
/// could carry the decorated credentials elsewhere; it is read as its status), a total deadline for
/// each exchange (however slowly the server trickles its answer), and a body limit enforced while the
/// body is read (a bigger answer is refused as soon as it passes it). Cancelling the calling task
/// cancels the request.
public final class URLSessionProviderTransport: ProviderTransport {
    /// How long one exchange may take in all.
    package let timeout: Duration
    /// The largest answer body accepted (a bigger one is an unreadable answer).
    package let bodyLimit: Int
    private let session: URLSession
    private let exchanges: BoundedExchanges

    /// A transport.
    public init(timeout: Duration = .seconds(10), bodyLimit: Int = 256 * 1024) {
        self.timeout = timeout
        self.bodyLimit = max(bodyLimit, 1)
        exchanges = BoundedExchanges(bodyLimit: max(bodyLimit, 1))
        session = exchanges.session(timeout: timeout)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// One exchange.
    public func send(_ request: V2OutgoingRequest) async -> Result<ProviderHTTPAnswer, ProviderFailure> {
        guard let url = URL(string: request.url) else { return .failure(.unknown("the provider's URL is not valid")) }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        switch await exchanges.exchange(urlRequest, on: session, within: timeout) {
        case .answered(let http, let data):
            return .success(
                ProviderHTTPAnswer(
                    status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"), body: [UInt8](data)))
        case .tooLarge: return .failure(.unknown("the answer is larger than \(bodyLimit) bytes"))
        case .timedOut, .failed: return .failure(.networkFailure)
        }
    }
}
