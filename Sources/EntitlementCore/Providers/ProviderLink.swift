/// One link of a provider chain as the machine knows it: its id, whether it is the TV-provider path, and
/// whether its requests run one at a time (``EngineSettings/providers``; `ProviderChain` fills it).
public struct ProviderLink: Sendable, Hashable {
    /// The id of the TV-provider (Adobe Pass) link.
    public static let tvProviderID = "tv-provider"

    /// The provider's id (``tvProviderID`` for the TV-provider path).
    public var id: String
    /// Whether its credential requests run one at a time.
    public var requestsOneAtATime: Bool
    /// Whether the user signs in to it (`EntitlementProvider.signsIn`).
    public var signsIn: Bool
    /// Whether it renews invalid user tokens (`EntitlementProvider.renewsTokens`).
    public var renewsTokens: Bool
    /// How often it is verified again while configured (nil: only at `setRequestor`).
    public var verificationInterval: Duration?

    /// Creates a link.
    public init(
        id: String, requestsOneAtATime: Bool = false, signsIn: Bool = false, renewsTokens: Bool = false,
        verificationInterval: Duration? = nil
    ) {
        self.id = id
        self.requestsOneAtATime = requestsOneAtATime
        self.signsIn = signsIn
        self.renewsTokens = renewsTokens
        self.verificationInterval = verificationInterval.map { max($0, .seconds(60)) }
    }

    /// The TV-provider path: it claims every resource while the user is signed in with an MVPD.
    public static let tvProvider = ProviderLink(id: tvProviderID)

    /// Whether this is the TV-provider path.
    public var isTVProvider: Bool { id == Self.tvProviderID }
}
