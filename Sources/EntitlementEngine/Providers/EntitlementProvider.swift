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

/// Who a provider answers for: the device, the requestor the engine was configured with, and the
/// session — which changes with every `setRequestor`, so a service can tell an old request from a new one.
public struct ProviderSession: Sendable, Hashable {
    /// The device's id.
    public var deviceID: String
    /// The requestor set by `setRequestor`.
    public var requestorID: String
    /// `DEVICE#N`: the device and the configuration it runs under (N grows with every `setRequestor`).
    public var sessionID: String
    /// The user token the engine holds for this provider (a secret), if the user signed in to it.
    public var userToken: String?
    /// The engine's number for this request, unique in the engine (0 for a verification at
    /// `setRequestor`): a provider may use it to tell requests apart, or a test to order answers.
    public var requestID: UInt64
    /// The transaction a step-up approved, sent with the one retry of the request (a secret, single use).
    public var transactionID: String?

    /// Creates a session.
    public init(
        deviceID: String, requestorID: String, sessionID: String, userToken: String? = nil, requestID: UInt64 = 0,
        transactionID: String? = nil
    ) {
        self.deviceID = deviceID
        self.requestorID = requestorID
        self.sessionID = sessionID
        self.userToken = userToken
        self.requestID = requestID
        self.transactionID = transactionID
    }

    /// The session of a configuration: its device, requestor and configuration operation.
    static func of(deviceID: String, requestorID: String, configuration: OperationID, userToken: String? = nil) -> ProviderSession {
        ProviderSession(
            deviceID: deviceID, requestorID: requestorID, sessionID: "\(deviceID)#\(configuration.rawValue)", userToken: userToken)
    }
}
