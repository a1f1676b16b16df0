import EntitlementEngine
import EntitlementHTTP

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// A provider's HTTP exchanges over `URLSession`: no cookies, no cache, no redirects followed (one
/// could carry the decorated credentials elsewhere; it is read as its status), a deadline, a body
/// limit. Cancelling the calling task cancels the request.
public final class URLSessionProviderTransport: ProviderTransport {
    /// How long one exchange may take.
    public let timeout: Duration
    /// The largest answer body accepted (a bigger one is an unreadable answer).
    public let bodyLimit: Int
    private let session: URLSession

    /// A transport.
    public init(timeout: Duration = .seconds(10), bodyLimit: Int = 256 * 1024) {
        self.timeout = timeout
        self.bodyLimit = max(bodyLimit, 1)
        let configuration = URLSessionConfiguration.ephemeral
        let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
        configuration.timeoutIntervalForRequest = seconds
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        session = URLSession(configuration: configuration, delegate: RedirectRefusal(), delegateQueue: nil)
    }

    deinit { session.finishTasksAndInvalidate() }

    /// One exchange.
    public func send(_ request: V2OutgoingRequest) async -> Result<ProviderHTTPAnswer, ProviderFailure> {
        guard let url = URL(string: request.url) else { return .failure(.unknown("the provider's URL is not valid")) }
        var urlRequest = URLRequest(url: url, cachePolicy: .reloadIgnoringLocalCacheData)
        urlRequest.httpMethod = request.method
        for (name, value) in request.headers { urlRequest.setValue(value, forHTTPHeaderField: name) }
        if !request.body.isEmpty { urlRequest.httpBody = Data(request.body) }
        do {
            let (data, response) = try await session.data(for: urlRequest)
            guard let http = response as? HTTPURLResponse else { return .failure(.networkFailure) }
            guard data.count <= bodyLimit else { return .failure(.unknown("the answer is larger than \(bodyLimit) bytes")) }
            return .success(
                ProviderHTTPAnswer(
                    status: http.statusCode, contentType: http.value(forHTTPHeaderField: "Content-Type"), body: [UInt8](data)))
        } catch {
            return .failure(.networkFailure)
        }
    }
}

/// Answers every redirect with "do not follow".
private final class RedirectRefusal: NSObject, URLSessionTaskDelegate, Sendable {
    func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping @Sendable (URLRequest?) -> Void
    ) {
        completionHandler(nil)
    }
}
