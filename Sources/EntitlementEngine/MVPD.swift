/// A TV provider as the requestor's configuration describes it (cookbook `MVPD` object).
public struct MVPD: Sendable, Hashable, Codable {
    /// The provider id used in `setSelectedProvider` (for example `acme-cable`).
    public var id: String
    /// The name shown in the provider picker.
    public var displayName: String
    /// The logo shown in the provider picker.
    public var logoURL: String
    /// Whether the provider supports platform single sign-on (cookbook D/E; used by a later issue).
    public var enablePlatformServices: Bool

    /// Creates an MVPD description.
    public init(id: String, displayName: String, logoURL: String = "", enablePlatformServices: Bool = false) {
        self.id = id
        self.displayName = displayName
        self.logoURL = logoURL
        self.enablePlatformServices = enablePlatformServices
    }
}
