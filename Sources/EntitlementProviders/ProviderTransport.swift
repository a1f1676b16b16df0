import EntitlementEngine
import EntitlementHTTP

/// How a provider reaches its service: one HTTP exchange, already decorated. ``HTTPProviderTransport``
/// goes over the network; a test or the simulator answers in process.
public protocol ProviderTransport: Sendable {
    /// Sends `request`; the answer, or why there was none (`ProviderFailure.networkFailure`).
    func send(_ request: V2OutgoingRequest) async -> Result<ProviderHTTPAnswer, ProviderFailure>
}

/// An HTTP answer as a provider reads it.
public struct ProviderHTTPAnswer: Sendable, Hashable {
    /// The status.
    public var status: Int
    /// The `Content-Type`, if any.
    public var contentType: String?
    /// The body (at most the transport's limit).
    public var body: [UInt8]

    /// Creates an answer.
    public init(status: Int, contentType: String? = nil, body: [UInt8] = []) {
        self.status = status
        self.contentType = contentType
        self.body = body
    }
}
