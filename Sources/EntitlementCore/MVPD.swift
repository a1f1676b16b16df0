/// A TV provider as the requestor's configuration describes it (cookbook `MVPD` object).
public struct MVPD: Sendable, Hashable, Codable {
    /// The provider id used in `setSelectedProvider` (for example `acme-cable`).
    public var id: String
    /// The name shown in the provider picker.
    public var displayName: String
    /// The logo shown in the provider picker.
    public var logoURL: String
    /// Whether the provider supports platform single sign-on (cookbook D).
    public var enablePlatformServices: Bool
    /// Whether this is a TempPass pseudo-MVPD: choosing it signs in at once, for a limited time per
    /// device, without any login page (the configuration's `isTempPass`).
    public var isTempPass: Bool
    /// Whether the MVPD authenticates per requestor: no single sign-on across requestors; another
    /// requestor's login on this device leads to passive authentication instead (N001).
    public var authenticationPerRequestor: Bool

    /// Creates an MVPD description.
    public init(
        id: String, displayName: String, logoURL: String = "", enablePlatformServices: Bool = false, isTempPass: Bool = false,
        authenticationPerRequestor: Bool = false
    ) {
        self.authenticationPerRequestor = authenticationPerRequestor
        self.id = id
        self.displayName = displayName
        self.logoURL = logoURL
        self.enablePlatformServices = enablePlatformServices
        self.isTempPass = isTempPass
    }

    private enum CodingKeys: String, CodingKey {
        case id, displayName, logoURL, enablePlatformServices, isTempPass, authenticationPerRequestor
    }

    /// Decodes an MVPD; `isTempPass` and `authenticationPerRequestor` may be absent (false).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        displayName = try container.decode(String.self, forKey: .displayName)
        logoURL = try container.decode(String.self, forKey: .logoURL)
        enablePlatformServices = try container.decode(Bool.self, forKey: .enablePlatformServices)
        isTempPass = try container.decodeIfPresent(Bool.self, forKey: .isTempPass) ?? false
        authenticationPerRequestor = try container.decodeIfPresent(Bool.self, forKey: .authenticationPerRequestor) ?? false
    }
}
