import EntitlementSupport

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
    package init(operation: String, method: String, url: String, headers: [String: String], body: [UInt8]) {
        self.operation = operation
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
    }

    /// `request` as a client sends it below `baseURL`: its URL, exactly the documented headers its
    /// `context` has for it (Adobe's REST API V2 header pages: `Authorization: Bearer`,
    /// `AP-Device-Identifier: fingerprint <base64>`, `X-Device-Info`, `X-Forwarded-For`,
    /// `AP-Visitor-Identifier`, `AP-TempPass-Identity` — each only where the operation takes it), and its body.
    package init(_ request: V2Request, context: V2RequestContext, baseURL: String) {
        var headers = ["Accept": "application/json"]
        if let bearer = context.bearer, request.needsAccessToken { headers["Authorization"] = "Bearer \(bearer)" }
        if let id = context.deviceID, request.deviceIdentifier != .notSent {
            headers["AP-Device-Identifier"] = "fingerprint \(Base64.encode(Array(id.utf8)))"
        }
        if let info = context.deviceInfo, request.deviceInfo != .notSent { headers["X-Device-Info"] = info.headerValue }
        if let address = context.forwardedFor, request.needsAccessToken { headers["X-Forwarded-For"] = address }
        if let visitor = context.visitorID, request.needsAccessToken { headers["AP-Visitor-Identifier"] = visitor }
        if let identity = context.tempPassIdentity, request.acceptsTempPassIdentity { headers["AP-TempPass-Identity"] = identity }
        let body = request.body
        if let body { headers["Content-Type"] = body.contentType }
        self.init(
            operation: request.operation, method: request.method.rawValue, url: baseURL + request.target, headers: headers,
            body: body?.bytes ?? [])
    }
}
