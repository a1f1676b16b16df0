/// The headers a V2 request carries besides its body (Adobe's REST API V2 header pages), as the service reads them.
public struct V2RequestContext: Sendable, Hashable {
    /// The bearer access token (`Authorization: Bearer …`), if sent.
    public var bearer: String?
    /// The streaming device's id (`AP-Device-Identifier: fingerprint <base64>`, decoded), if sent.
    public var deviceID: String?
    /// The streaming device's public address (`X-Forwarded-For`), if sent; throttling keys on it.
    public var forwardedFor: String?
    /// The device's description (`X-Device-Info`), if sent.
    public var deviceInfo: V2DeviceInfo?
    /// `AP-Visitor-Identifier`, if sent.
    public var visitorID: String?
    /// `AP-TempPass-Identity`, if sent.
    public var tempPassIdentity: String?

    /// Creates a context.
    public init(
        bearer: String? = nil, deviceID: String? = nil, forwardedFor: String? = nil, deviceInfo: V2DeviceInfo? = nil,
        visitorID: String? = nil, tempPassIdentity: String? = nil
    ) {
        self.bearer = bearer
        self.deviceID = deviceID
        self.forwardedFor = forwardedFor
        self.deviceInfo = deviceInfo
        self.visitorID = visitorID
        self.tempPassIdentity = tempPassIdentity
    }
}
