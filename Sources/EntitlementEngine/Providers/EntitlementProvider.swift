/// An entitlement provider beside the TV provider: a direct subscription, a server that authorizes
/// resources, an app's own purchase records (Pugpig's `KGAuthorisation`).
///
/// The engine asks a provider two things, always off its actor and with the engine's request deadline:
/// ``verify(_:)`` — what the user may access now (when the requestor is set) — and
/// ``credentials(for:_:)`` — the credentials for one resource the provider claimed. The cheap,
/// synchronous "does this user have access to R?" is answered by the engine from the last verified
/// ``ProviderView``, so it needs no call and replays from a trace. Order and fallback are the
/// ``ProviderChain``'s.
public protocol EntitlementProvider: Sendable {
    /// The provider's id: in ``Callback/entitlementsChanged(_:)``, traces and logs. Unique in a chain.
    var id: String { get }
    /// Whether the provider's credential requests must run one at a time (a provider that validates
    /// store receipts in order, say); the engine then holds the others until the one running ends.
    var requestsOneAtATime: Bool { get }
    /// What the user may access now, or why that cannot be said.
    func verify(_ session: ProviderSession) async -> Result<ProviderView, ProviderFailure>
    /// The credentials for `resource`, handed to the app by `setToken`, or why there are none.
    func credentials(for resource: String, _ session: ProviderSession) async -> Result<ProviderCredentials, ProviderFailure>

    /// Whether the user signs in to this provider with credentials (the `signIn` call); its user
    /// token then comes with every request (``ProviderSession/userToken``).
    var signsIn: Bool { get }
    /// Whether it can renew a user token its service called invalid (else the user is signed out).
    var renewsTokens: Bool { get }
    /// How often the engine verifies again while configured (nil: only at `setRequestor`).
    var verificationInterval: Duration? { get }
    /// Signs in with what the user typed: the user token, or why not.
    func signIn(with credentials: [String: String], _ session: ProviderSession) async -> Result<String, ProviderFailure>
    /// A new user token for ``ProviderSession/userToken``, or why not.
    func renew(_ session: ProviderSession) async -> Result<String, ProviderFailure>
    /// Tells the service the user signed out (best effort).
    func signOut(_ session: ProviderSession) async
}

extension EntitlementProvider {
    /// By default requests run side by side.
    public var requestsOneAtATime: Bool { false }
    /// By default no sign-in.
    public var signsIn: Bool { false }
    /// By default no renewal.
    public var renewsTokens: Bool { false }
    /// By default verified only at `setRequestor`.
    public var verificationInterval: Duration? { nil }
    /// By default: unavailable.
    public func signIn(with credentials: [String: String], _ session: ProviderSession) async -> Result<String, ProviderFailure> {
        .failure(.unavailable)
    }
    /// By default: the token stays invalid.
    public func renew(_ session: ProviderSession) async -> Result<String, ProviderFailure> { .failure(.invalidToken) }
    /// By default: nothing to tell.
    public func signOut(_ session: ProviderSession) async {}
}
