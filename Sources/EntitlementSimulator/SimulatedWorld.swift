import EntitlementEngine
import EntitlementSupport

/// The world the simulator plays: requestors, MVPDs and users.
public struct SimulatedWorld: Sendable {
    /// A programmer (requestor) and the MVPDs it works with.
    public struct Requestor: Sendable, Hashable {
        /// The requestor id passed to `setRequestor`.
        public var id: String
        /// Its MVPDs, in picker order.
        public var mvpdIDs: [String]
        /// The resources it protects.
        public var resources: [String]

        /// Creates a requestor.
        public init(id: String, mvpdIDs: [String], resources: [String]) {
            self.id = id
            self.mvpdIDs = mvpdIDs
            self.resources = resources
        }
    }

    /// A TV provider with its login page and token lifetimes.
    public struct Provider: Sendable, Hashable {
        /// The MVPD id.
        public var id: String
        /// The name in the picker.
        public var displayName: String
        /// How long an authentication lasts.
        public var authenticationTTL: Duration
        /// How long an authorization lasts.
        public var authorizationTTL: Duration
        /// Extra redirect hops between the MVPD's login page and the service provider (SAML-style relays).
        public var extraLoginHops: Int
        /// Whether logout visits the MVPD's own logout page (else the chain goes straight back).
        public var hasLogoutPage: Bool
        /// Supports platform single sign-on (shown as `enablePlatformServices`; cookbook D).
        public var platformSSO: Bool
        /// A TempPass pseudo-MVPD: choosing it signs the device in at once for `authenticationTTL`,
        /// counted from the first grant, then never again until the simulator resets it.
        public var tempPass: Bool
        /// Authentication per requestor: no single sign-on across requestors; another requestor's
        /// login on the device leads to passive authentication, which needs the MVPD's own session.
        public var perRequestor: Bool
        /// Degraded access (Adobe's AuthNAll rule while the MVPD is down): sessions answer
        /// `authorize/degraded`, profiles are issued by Adobe, decisions permit with `source: degradation`.
        public var degraded: Bool

        /// The base URL of the provider's login pages (default `https://login.<id>.sim`; a world
        /// served over HTTP puts them under its own URL, see ``SimulatedWorld/served(at:)``).
        public var loginHost: String

        /// Creates a provider.
        public init(
            id: String, displayName: String, authenticationTTL: Duration = .seconds(86_400),
            authorizationTTL: Duration = .seconds(86_400), extraLoginHops: Int = 0, hasLogoutPage: Bool = true,
            platformSSO: Bool = false, tempPass: Bool = false, perRequestor: Bool = false, degraded: Bool = false,
            loginHost: String? = nil
        ) {
            self.loginHost = loginHost ?? "https://login.\(id).sim"
            self.degraded = degraded
            self.id = id
            self.displayName = displayName
            self.authenticationTTL = authenticationTTL
            self.authorizationTTL = authorizationTTL
            self.extraLoginHops = extraLoginHops
            self.hasLogoutPage = hasLogoutPage
            self.platformSSO = platformSSO
            self.tempPass = tempPass
            self.perRequestor = perRequestor
        }

        /// The provider as the engine's configuration shows it.
        public var mvpd: MVPD {
            MVPD(
                id: id, displayName: displayName, logoURL: "\(loginHost)/logo.png", enablePlatformServices: platformSSO,
                isTempPass: tempPass, authenticationPerRequestor: perRequestor)
        }
    }

    /// A subscriber of one MVPD.
    public struct User: Sendable, Hashable {
        /// The login name.
        public var username: String
        /// The password (a secret).
        public var password: String
        /// The MVPD the user subscribes through.
        public var mvpdID: String
        /// The MVPD's user id.
        public var userID: String
        /// The resources the subscription includes.
        public var entitlements: Set<String>
        /// Resources the MVPD denies with a specific message.
        public var denials: [String: String]
        /// User metadata by name (`zip`, `householdID`, `maxRating`, …).
        public var metadata: [String: MetadataValue]
        /// The names whose values the MVPD sends encrypted (for the programmer's key).
        public var encryptedMetadata: Set<String>
        /// Resources under the MVPD's home-based authentication policy: denied with
        /// `authorization_denied_by_hba_policies` (action `authentication`) until the user logs in again.
        public var hbaResources: Set<String> = []

        /// Creates a user.
        public init(
            username: String, password: String, mvpdID: String, userID: String, entitlements: Set<String>,
            denials: [String: String] = [:], metadata: [String: MetadataValue] = [:], encryptedMetadata: Set<String> = []
        ) {
            self.username = username
            self.password = password
            self.mvpdID = mvpdID
            self.userID = userID
            self.entitlements = entitlements
            self.denials = denials
            self.metadata = metadata
            self.encryptedMetadata = encryptedMetadata
        }
    }

    /// The requestors.
    public var requestors: [Requestor]
    /// The MVPDs.
    public var providers: [Provider]
    /// The users.
    public var users: [User]
    /// Providers of a chain beside the TV provider (scenario `provider` declarations), in declaration order.
    package var chainProviders: [ChainProvider] = []
    /// The subscribers of the world's direct subscriptions (`subscriber` declarations).
    package var subscribers: [Subscriber] = []

    /// A user of a direct subscription (Pugpig's Security API).
    package struct Subscriber: Sendable, Hashable {
        /// The name the user signs in with.
        package var username: String
        /// The password.
        package var password: String
        /// The subscription provider's id.
        package var providerID: String
        /// The issues the subscription gives access to.
        package var issues: Set<String>
        /// Whether the subscription has lapsed (sign-in still works, the same as for an active one).
        package var lapsed = false
        /// The message Verify Subscription shows.
        package var message: String?

        /// Creates a subscriber.
        package init(username: String, password: String, providerID: String, issues: Set<String>, lapsed: Bool = false, message: String? = nil) {
            self.username = username
            self.password = password
            self.providerID = providerID
            self.issues = issues
            self.lapsed = lapsed
            self.message = message
        }
    }

    /// The chain's order by id (`tv-provider` for the TV provider); nil: the declared providers, then the TV provider.
    package var chainOrder: [String]?

    /// A provider of the chain as the world describes it: what it grants and how it answers.
    package struct ChainProvider: Sendable, Hashable {
        /// What kind of provider it is.
        package enum Kind: String, Sendable, Hashable {
            /// A `SimulatedEntitlementProvider`: it answers in process.
            case simulated
            /// The programmer's own authorization service (`Simulator.programmerAuthorization(serverID:form:)`),
            /// asked by a server-based authorization provider over HTTP or in process.
            case server
            /// A direct subscription on Pugpig's Security API (`Simulator.securityAPI(providerID:operation:form:)`),
            /// its subscribers declared with ``SimulatedWorld/subscribers``.
            case subscription
        }

        /// Its id.
        package var id: String
        /// Its kind.
        package var kind = Kind.simulated
        /// For a server: the resources it refuses, with its message (it claims these and ``grants``).
        package var denials: [String: String] = [:]
        /// For a server: the PIN that approves a step-up for ``pinProtected`` resources (a parental control).
        package var pin: String?
        /// For a server: the resources that need a step-up (an approved transaction) before they are granted.
        package var pinProtected: Set<String> = []
        /// For a subscription: whether its service renews invalid tokens.
        package var renews = false
        /// For a subscription: how often the engine verifies again (nil: at `setRequestor` only).
        package var verificationInterval: Duration?
        /// Whether it takes one credentials request at a time.
        package var requestsOneAtATime = false
        /// The resources it claims for every user.
        package var grants: Set<String> = []
        /// What it tells the user.
        package var message: String?

        /// Creates a provider.
        package init(id: String, requestsOneAtATime: Bool = false, grants: Set<String> = [], message: String? = nil) {
            self.id = id
            self.requestsOneAtATime = requestsOneAtATime
            self.grants = grants
            self.message = message
        }
    }
    /// The domain of the simulated app, which an engine talking to the simulator sends as
    /// `EngineSettings.domainName` (``SimulatedSession`` sets it when its settings name none). The
    /// simulator's own value: never a default of anything that talks to Adobe.
    public static let appDomain = "sim-app.example"
    /// The service provider's base URL.
    public var serviceProvider: String
    /// How long a media token lasts (default 7 minutes).
    public var mediaTokenTTL: Duration
    /// How long a session's code may be used to log in (30 minutes, REST API V2's sample).
    public var sessionTTL: Duration
    /// The key media tokens are signed with (HMAC-SHA-256); the programmer's backend verifies with it.
    public var mediaTokenKey: [UInt8]
    /// The key the platform signs its TV-provider assertions with; the backend verifies with it.
    public var platformKey: [UInt8]
    /// How long a platform assertion may be exchanged (5 minutes).
    public var assertionTTL: Duration

    /// Creates a world.
    public init(
        requestors: [Requestor], providers: [Provider], users: [User], serviceProvider: String = "https://sp.sim",
        mediaTokenTTL: Duration = .seconds(420), sessionTTL: Duration = .seconds(1800),
        mediaTokenKey: [UInt8] = Array("sim-media-token-signing-key-0001".utf8),
        platformKey: [UInt8] = Array("sim-platform-assertion-key-00001".utf8), assertionTTL: Duration = .seconds(300)
    ) {
        self.platformKey = platformKey
        self.assertionTTL = assertionTTL
        self.requestors = requestors
        self.providers = providers
        self.users = users
        self.serviceProvider = serviceProvider
        self.mediaTokenTTL = mediaTokenTTL
        self.sessionTTL = sessionTTL
        self.mediaTokenKey = mediaTokenKey
    }

    /// The same world with its web under `baseURL` (`http://127.0.0.1:PORT`): the service
    /// provider's pages at the root, each MVPD's pages under `/mvpd/<id>` — one origin a real browser
    /// can reach.
    public func served(at baseURL: String) -> SimulatedWorld {
        var world = self
        world.serviceProvider = baseURL
        for index in world.providers.indices {
            world.providers[index].loginHost = "\(baseURL)/mvpd/\(PercentEncoding.encode(world.providers[index].id))"
        }
        return world
    }

    /// The requestor with `id`.
    package func requestor(_ id: String) -> Requestor? { requestors.first { $0.id == id } }
    /// The MVPD with `id`.
    package func provider(_ id: String) -> Provider? { providers.first { $0.id == id } }
    /// The user with `username`.
    package func user(_ username: String) -> User? { users.first { $0.username == username } }

    /// The default world: 2 requestors, 4 MVPDs (Acme Cable and BlueSky TV support platform SSO),
    /// 6 users; `frank`'s MVPD denies `sports-live` with a message.
    public static let `default` = SimulatedWorld(
        requestors: [
            Requestor(
                id: "sim-requestor", mvpdIDs: ["acme-cable", "bluesky-tv", "coastal-fiber", "delta-satellite"],
                resources: ["news-channel", "sports-live", "movies-hd", "kids-zone"]),
            Requestor(id: "sim-news", mvpdIDs: ["acme-cable", "bluesky-tv"], resources: ["news-channel", "weather-now"]),
        ],
        providers: [
            Provider(id: "acme-cable", displayName: "Acme Cable", platformSSO: true),
            Provider(id: "bluesky-tv", displayName: "BlueSky TV", platformSSO: true),
            Provider(id: "coastal-fiber", displayName: "Coastal Fiber", authenticationTTL: .seconds(6 * 3600)),
            Provider(id: "delta-satellite", displayName: "Delta Satellite"),
        ],
        users: [
            User(
                username: "alice", password: "wonderland", mvpdID: "acme-cable", userID: "acme-7f3a",
                entitlements: ["news-channel", "sports-live", "movies-hd", "kids-zone", "weather-now"],
                metadata: [
                    "zip": .list(["10001"]), "householdID": .text("hh-alice"), "maxRating": .text("TV-MA"),
                    "userID": .text("acme-7f3a"), "upstreamUserID": .text("up-alice"),
                    "encryptedZip": .text("RVNBLVBLQ1MxLXYxNS4xMDAwMQ"),
                ], encryptedMetadata: ["encryptedZip"]),
            User(
                username: "bob", password: "builder", mvpdID: "acme-cable", userID: "acme-22c1",
                entitlements: ["news-channel"],
                metadata: ["zip": .list(["10002"]), "householdID": .text("hh-bob"), "maxRating": .text("TV-PG")]),
            User(
                username: "carol", password: "carolina", mvpdID: "bluesky-tv", userID: "sky-0c9e",
                entitlements: ["news-channel", "movies-hd", "weather-now"],
                metadata: ["zip": .list(["94107"]), "householdID": .text("hh-carol")]),
            User(
                username: "dave", password: "diving", mvpdID: "coastal-fiber", userID: "cf-1d2b",
                entitlements: ["news-channel", "sports-live"],
                metadata: ["zip": .list(["33101"]), "householdID": .text("hh-dave")]),
            User(
                username: "erin", password: "evergreen", mvpdID: "delta-satellite", userID: "ds-9e0f",
                entitlements: ["news-channel", "sports-live", "movies-hd", "kids-zone"],
                metadata: ["zip": .list(["60601", "60602"]), "householdID": .text("hh-erin")]),
            User(
                username: "frank", password: "furnace", mvpdID: "bluesky-tv", userID: "sky-5f5f",
                entitlements: ["news-channel"],
                denials: [
                    "sports-live":
                        "Your BlueSky TV package does not include Sports Live. Call 1-800-555-0100 to upgrade."
                ],
                metadata: ["zip": .list(["73301"]), "householdID": .text("hh-frank")]),
        ])
}

extension EngineSettings {
    /// The settings of an engine that talks to the simulator: the defaults, with the simulated app's
    /// domain (``SimulatedWorld/appDomain``) — which an engine talking to Adobe sets to its own — and
    /// the simulated device in tracking data (a computer running the Swift client on Linux), where an
    /// engine serving a real device describes that device (``EngineSettings/describingDevice(_:)``).
    public static var simulated: EngineSettings {
        var settings = EngineSettings(deviceType: "computer", clientType: "swift", operatingSystem: "Linux")
        settings.domainName = SimulatedWorld.appDomain
        return settings
    }
}
