/// A provider's credentials for one resource, handed to the app as `setToken`'s token (for a Pugpig
/// provider, the Basic credentials for the protected document; for a server that authorizes, its JSON
/// answer as text).
public struct ProviderCredentials: Sendable, Hashable {
    /// The credentials, opaque to the engine (never logged or traced in clear).
    public var token: String
    /// Whether the engine keeps them for good and hands them out again without asking (Pugpig's
    /// edition credentials: a lapsed subscriber keeps what was granted).
    public var keep: Bool

    /// Creates credentials.
    public init(token: String, keep: Bool = false) {
        self.token = token
        self.keep = keep
    }
}
