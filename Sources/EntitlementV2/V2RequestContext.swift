/// The headers a V2 request carries besides its body (Adobe's REST API V2 header pages), as the service reads them.
package struct V2RequestContext: Sendable, Hashable {
    /// The bearer access token (`Authorization: Bearer …`), if sent.
    package var bearer: String?
    /// The streaming device's id (`AP-Device-Identifier: fingerprint <base64>`, decoded), if sent.
    package var deviceID: String?
    /// The streaming device's public address (`X-Forwarded-For`), if sent; throttling keys on it.
    package var forwardedFor: String?
    /// The device's description (`X-Device-Info`), if sent.
    package var deviceInfo: V2DeviceInfo?
    /// `AP-Visitor-Identifier`, if sent.
    package var visitorID: String?
    /// `AP-TempPass-Identity`, if sent.
    package var tempPassIdentity: String?

    /// Creates a context.
    package init(
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
