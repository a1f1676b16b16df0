/// What a user holds with a provider that signs in (a direct subscription): the user token its
/// sign-in returned — never the credentials typed — and the credentials kept for good, by resource
/// (Pugpig keeps edition credentials indefinitely: a lapsed subscriber keeps what was granted).
public struct ProviderAccount: Sendable, Hashable, Codable {
    /// The user token, while signed in (a secret).
    public var userToken: String?
    /// Credentials kept for good, by resource (secrets).
    public var kept: [String: String]
    /// Until when an instance renews the user token (a fleet renews it once: the others wait for the
    /// store to hold the new one); nil while nobody does.
    package var renewingUntil: Timestamp?

    /// Creates an account.
    public init(userToken: String? = nil, kept: [String: String] = [:]) {
        self.userToken = userToken
        self.kept = kept
    }

    /// Whether there is nothing to keep.
    public var isEmpty: Bool { userToken == nil && kept.isEmpty }
}
