/// A request about to leave for REST API V2, as the request-decoration hook sees it: it may add or
/// change headers (a tracing header, an API gateway's key), the way libPusher's
/// `willAuthorizeChannel` and ForgeRock's `updateRequest` let apps decorate requests.
public struct V2OutgoingRequest: Sendable, Hashable {
    /// The operation (`createSession`, `authorize`, …).
    public let operation: String
    /// The method.
    public let method: String
    /// The full URL.
    public let url: String
    /// The header fields to send, by name.
    public var headers: [String: String]
    /// The body.
    public let body: [UInt8]

    /// Creates a request.
    public init(operation: String, method: String, url: String, headers: [String: String], body: [UInt8]) {
        self.operation = operation
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }
}
