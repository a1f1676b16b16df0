import EntitlementEngine
import EntitlementHTTP

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// A provider's HTTP exchanges, on libcurl (Linux's default) or `URLSession` (Apple's) — its
/// `HTTPStack`, as `HTTPV2Transport`'s: no cookies, no cache, no redirects followed (one
/// could carry the decorated credentials elsewhere; it is read as its status), a total deadline for
/// each exchange (however slowly the server trickles its answer), and a body limit enforced while the
/// body is read (a bigger answer is refused as soon as it passes it). Cancelling the calling task
/// cancels the request.
public final class HTTPProviderTransport: ProviderTransport {
    /// How long one exchange may take in all.
    package let timeout: Duration
    /// The largest answer body accepted (a bigger one is an unreadable answer).
    package let bodyLimit: Int
    /// The HTTP stack the exchanges run on (the one asked for, or `URLSession` where libcurl could not be opened).
    public let stack: HTTPStack
    private let exchanger: Exchanger

    /// A transport on `stack`.
    public init(timeout: Duration = .seconds(10), bodyLimit: Int = 256 * 1024, stack: HTTPStack = .platformDefault) {
        self.timeout = timeout
        self.bodyLimit = max(bodyLimit, 1)
        (exchanger, self.stack) = Exchanger.make(stack, bodyLimit: self.bodyLimit, timeout: timeout, connectionsPerHost: nil)
    }

    deinit { exchanger.close() }

    /// One exchange.
    public func send(_ request: V2OutgoingRequest) async -> Result<ProviderHTTPAnswer, ProviderFailure> {
        switch await exchanger.exchange(request, within: timeout) {
        case .answered(let status, let contentType, let body):
            return .success(ProviderHTTPAnswer(status: status, contentType: contentType.isEmpty ? nil : contentType, body: body))
        case .tooLarge: return .failure(.unknown("the answer is larger than \(bodyLimit) bytes"))
        case .timedOut, .failed: return .failure(.networkFailure)
        }
    }
}

/// The name ``HTTPProviderTransport`` had before it ran on libcurl as well as on `URLSession`.
@available(*, deprecated, renamed: "HTTPProviderTransport")
public typealias URLSessionProviderTransport = HTTPProviderTransport
