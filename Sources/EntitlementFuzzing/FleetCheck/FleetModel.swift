import EntitlementEngine
import EntitlementSimulator

/// One state of a fleet serving one device: the nodes' pure machines with what each node's shell holds
/// (its view's store version, requests in flight, timers, unanswered calls), the shared token store, the
/// service behind REST API V2 (its session and profile for the device), the user's browser (pages opened,
/// redirects waiting to be handed to a node), one clock, and what the checks remember.
///
/// ``FleetChecker`` enumerates every sequence of ``FleetEvent``s from the first state; ``apply(_:)`` takes
/// one event the way `AccessEnabler` and the simulator would, and reports every broken promise it sees.
/// Two states with equal ``fingerprint()`` are the same state (but for a hash collision, one in 2⁶⁴).
struct FleetModel: Sendable {
    /// A request to a provider a node sent and that is not answered yet.
    struct ProviderRequestOut: Sendable, Hashable {
        var operation: OperationID
        var request: ProviderRequest
        /// The time it ends unanswered (the shell's provider deadline).
        var deadline: Timestamp
        /// With step-ups: the transaction a request for the protected resource presents, if any.
        var transaction: String? = nil
        /// With step-ups: which request for the open resource this is (its grant's number).
        var number: Int? = nil
        /// With a subscription: the user token it carries.
        var userToken: String? = nil
    }

    /// An answer given and on its way to the node that asked (``FleetChecker/Bounds/lateAnswers``).
    enum Answer: Sendable, Hashable {
        /// The service's answer to a backend request.
        case backend(Result<BackendResponse, BackendError>)
        /// A provider's answer to `request`.
        case provider(ProviderRequest, ProviderAnswer)
    }

    /// What one node holds: its machine and its shell's bookkeeping.
    /// Every field that decides what the node does next forgets ``hash`` when it changes.
    struct Node: Sendable {
        var machine: EntitlementMachine { didSet { hash = nil } }
        /// Restarts so far: secrets drawn after a restart differ from those drawn before.
        var generation: Int { didSet { hash = nil } }
        /// The store version the machine's view came from (nil: never read).
        var knownVersion: UInt64? { didSet { hash = nil } }
        /// Whether the machine kept a view of its own when it last followed the store.
        var viewHeldBack = false { didSet { hash = nil } }
        /// Whether the shell follows the store for the machine (its steps said so: configured).
        var followsStore = false { didSet { hash = nil } }
        var lastCall: UInt64 = 0 { didSet { hash = nil } }
        /// Backend requests sent and not answered, oldest first, with the time each ends unanswered (the
        /// shell's request deadline).
        var requests: [(operation: OperationID, request: BackendRequest, deadline: Timestamp)] = [] { didSet { hash = nil } }
        /// Answers the service or a provider gave (it acted on the request) that have not reached the node
        /// yet, oldest first, with the time the shell stops waiting for each (``FleetChecker/Bounds/lateAnswers``).
        var answered: [(operation: OperationID, answer: Answer, deadline: Timestamp)] = [] { didSet { hash = nil } }
        /// Provider requests sent and not answered, oldest first.
        var askedProvider: [ProviderRequestOut] = [] { didSet { hash = nil } }
        /// Timers started and not fired or cancelled.
        var timers: [(id: TimerID, at: Timestamp)] = [] { didSet { hash = nil } }
        /// The device's calls on this node not answered yet.
        var waiting: [CallID] = [] { didSet { hash = nil } }
        /// Whether this node showed the app a registration code answering no call (one it resumed from the
        /// store when it started again), and has not said since how that login ended: it speaks for it.
        var showsCode = false { didSet { hash = nil } }
        /// The login whose platform picker the device shows through this node (``FleetChecker/Bounds/platform``).
        var platformPicker: FlowID? { didSet { hash = nil } }
        /// The node's part of the fleet's ``FleetModel/fingerprint()`` while nothing it is made of changed
        /// (a successor state keeps the hash of every node its event left alone).
        var hash: Int?

        /// Every field that decides what the node does next, hashed.
        var computedHash: Int {
            var hasher = Hasher()
            machine.fingerprint(into: &hasher)
            hasher.combine(generation)
            hasher.combine(knownVersion)
            hasher.combine(viewHeldBack)
            hasher.combine(followsStore)
            hasher.combine(lastCall)
            hasher.combine(requests.count)
            for sent in requests {
                hasher.combine(sent.operation)
                hasher.combine(sent.request)
                hasher.combine(sent.deadline)
            }
            hasher.combine(answered.count)
            for answer in answered {
                hasher.combine(answer.operation)
                hasher.combine(answer.answer)
                hasher.combine(answer.deadline)
            }
            hasher.combine(askedProvider)
            hasher.combine(timers.count)
            for timer in timers {
                hasher.combine(timer.id)
                hasher.combine(timer.at)
            }
            hasher.combine(waiting)
            hasher.combine(showsCode)
            hasher.combine(platformPicker)
            return hasher.finalize()
        }
        /// Inputs the shell feeds before any other (secrets drawn, a failed save), during one event only.
        var immediate: [Input] = []
        /// Inputs queued behind them (resubmitted calls), during one event only.
        var mailbox: [Input] = []
    }

    /// The token store every node shares.
    struct Store: Sendable {
        /// What the store holds, by reference with its hash: it changes only when a save holds.
        final class Content: Sendable {
            let tokens: StoredTokens
            let hash: Int
            init(_ tokens: StoredTokens) {
                self.tokens = tokens
                hash = tokens.hashValue
            }
        }
        private var content = Content(.empty)
        /// What the store held before its last acknowledged write (nil: none to lose).
        private var before: Content?
        var tokens: StoredTokens {
            get { content.tokens }
            set { content = Content(newValue) }
        }
        /// Takes a write: what it replaces is kept, for the store to lose the write.
        mutating func write(_ tokens: StoredTokens) {
            before = content
            content = Content(tokens)
            version += 1
        }
        /// Whether there is a write to lose.
        var canLoseLastWrite: Bool { before != nil }
        /// Forgets the last write: the tokens are as before it, under a new version.
        mutating func loseLastWrite() {
            guard let before else { return }
            content = before
            self.before = nil
            version += 1
        }
        /// The hash of what the store held before its last write (0: nothing to lose).
        var beforeHash: Int { before?.hash ?? 0 }
        /// ``tokens``' hash.
        var tokensHash: Int { content.hash }
        var version: UInt64 = 1
        var up = true
    }

    /// REST API V2's view of the device: its one live authentication session (a new one replaces the
    /// older, as Adobe's does), whether a user logged in with it, and the device's profile.
    struct Service: Sendable {
        var session: (code: Int, redirect: String, loggedIn: Bool)?
        var lastCode = 0
        var profile = false
        /// When the user's newest login through a page or a code made the profile: its validity runs from
        /// then, as Adobe's does, so two logins' profiles differ (Adobe's may carry no session id).
        var profileIssued = FleetModel.start
        /// Interactive logouts waiting for the MVPD's page, by id: where they return to.
        var logoutReturns: [Int: String] = [:]
        var lastLogout = 0
        /// The step-up provider's transactions: how many it issued, those it granted access with (once
        /// each), and those it granted after a logout that came after it issued them.
        var transactionsIssued = 0
        var transactionsUsed: Set<Int> = []
        var grantedAfterLogout: Set<Int> = []
        /// How many requests for the open resource the provider was asked.
        var openAsked = 0
        /// The subscription's tokens: how many it gave, those it honours, those it renewed (each once, to
        /// the token it gave for it) and those the user signed out of.
        var subscriptionIssued = 0
        var subscriptionValid: Set<String> = []
        var subscriptionRenewed: [String: String] = [:]
        var subscriptionSignedOut: Set<String> = []
        /// Every subscription token a save put in the store.
        var subscriptionStored: Set<String> = []
        /// Whether the device's platform account is signed in to the MVPD (``FleetChecker/Bounds/platform``):
        /// once the user signed in through its picker, for good (a logout signs out of the app only).
        var platformSignedIn = false
        /// How many decisions permitting the TV provider's resource the service made (``FleetChecker/Bounds/authorize``).
        var decisionsMade = 0
    }

    /// A page the device's web view opened.
    struct Page: Sendable {
        enum Kind: Sendable, Hashable {
            case login(code: Int)
            case logout(id: Int)
            /// A registration code the device shows, for a second screen.
            case code(Int)
            /// A sign-in with the platform's account (its picker, or a node's silent one at `setRequestor`):
            /// a login, used when it is made.
            case platform
        }
        var seq: Int
        var url: String
        var kind: Kind
        var used = false
    }

    /// A redirect the browser got back, to hand to a node (at most twice: a redirect delivered twice).
    struct Redirect: Sendable {
        var url: String
        var deliveries = 0
    }

    var nodes: [Node]
    var store = Store()
    var service = Service() { didSet { worldHash = nil } }
    var pages: [Page] = [] { didSet { worldHash = nil } }
    var redirects: [Redirect] = [] { didSet { worldHash = nil } }
    /// The service's, the pages' and the redirects' part of ``fingerprint()`` while none of them changed
    /// (most events are a node's own).
    var worldHash: Int?
    var now: Timestamp
    /// What the bounds still allow: device calls, user actions, faults.
    var callsLeft: Int
    var userActionsLeft: Int
    var faultsLeft: Int
    /// Pages issued before this sequence number are stale: a logout or cancel came after them.
    var validFromPage = 0
    /// The sequence number of the newest page the user logged in on (-1: none).
    var lastLoginPage = -1
    /// How many transactions the provider had issued when the device last logged out (step-ups asked
    /// before that logout).
    var transactionsBeforeLogout = 0
    /// How many requests for the open resource the provider had been asked when the device last logged
    /// out: a grant for one of them handed out afterwards is one made for the device before its logout.
    var openAskedBeforeLogout = 0
    /// How many decisions the service had made when the device last logged out: a media token of one of
    /// them handed out afterwards is one decided for the device before its logout.
    var decisionsBeforeLogout = 0
    /// The redirect of the user's last login, when it was made on the newest login page, opened after the
    /// device last chose a provider, cancelled or logged out (nil: none).
    var newestLoginRedirect: Int?
    /// Whether that redirect reached a node before the login's deadline.
    var newestLoginDelivered = false
    /// Pages opened before this sequence number came before the device's last choice, cancel or logout.
    var chosenFromPage = 0
    /// When the newest login page was opened (its login's deadline is the redirect timeout after).
    var newestPageOpened = Timestamp(milliseconds: 0)
    /// Broken promises the last event found (not part of the state).
    var problems: [String] = []
    /// The callbacks the last event led to, as script lines, when ``tellsScript`` (not part of the state).
    var told: [String] = []
    /// Whether events write ``told`` (a replay does; the search does not pay for the text).
    var tellsScript = false
    /// The call whose `setAuthenticationStatus` is noted in ``probeAnswer`` (not part of the state).
    var probe: (node: Int, call: CallID)?
    var probeAnswer: Int?

    static let requestorID = "sim-requestor"
    static let mvpd = MVPD(id: "acme-cable", displayName: "Acme Cable")
    static let configuration = RequestorConfiguration(requestorID: requestorID, mvpds: [mvpd])
    /// The same MVPD, supporting the platform's sign-in (``FleetChecker/Bounds/platform``).
    static let platformConfiguration = RequestorConfiguration(
        requestorID: requestorID, mvpds: [MVPD(id: mvpd.id, displayName: mvpd.displayName, enablePlatformServices: true)])
    static let deviceID = "device-1"
    static let serviceProvider = "https://sp.check"
    static let start = Timestamp(milliseconds: 1_800_000_000_000)
    /// The resource a PIN protects (``FleetChecker/Bounds/stepUp``), and the provider that answers for it.
    static let protectedResource = "film"
    static let stepUpProvider = "pin"
    /// A resource the same provider grants without a step-up (a plain server authorization).
    static let openResource = "news"
    /// The direct subscription (``FleetChecker/Bounds/subscription``) and the issue the device reads.
    static let subscriptionProvider = "mag"
    static let issue = "issue-1"
    /// The resource the TV provider decides on (``FleetChecker/Bounds/authorize``).
    static let channel = "sports"


    /// Whether anything went wrong so far: a fault, or a request that passed its deadline unanswered.
    var sawFailure = false
    /// Whether the store lost a write it had acknowledged: what the device was told may be undone (a
    /// logout, a transaction marked used), so the promises that order what a node tells after a logout,
    /// and a transaction's single use, no longer bind; the others still do.
    var lostWrite = false
    /// Every node's settings (the same for the whole check; not hashed), held by reference: a state is
    /// copied for every event the search takes.
    final class Constants: Sendable {
        let settings: EngineSettings
        /// Whether the check is of step-ups (``FleetChecker/Bounds/stepUp``).
        let stepUp: Bool
        /// Whether the store may lose its last write (``FleetChecker/Bounds/lostWrites``).
        let lostWrites: Bool
        /// Whether the check is of a direct subscription (``FleetChecker/Bounds/subscription``).
        let subscription: Bool
        /// Whether the device has the platform's account (``FleetChecker/Bounds/platform``).
        let platform: Bool
        /// Whether the device asks the TV provider's authorization (``FleetChecker/Bounds/authorize``).
        let authorize: Bool
        /// Whether the device pre-authorizes that resource (``FleetChecker/Bounds/preauthorize``).
        let preauthorize: Bool
        /// Whether the service's answers travel apart from its acting (``FleetChecker/Bounds/lateAnswers``).
        let lateAnswers: Bool
        /// The requestor's configuration every node loads (its MVPD supports the platform's sign-in in a
        /// check with one).
        let configuration: RequestorConfiguration
        /// A node's machine as it starts, recording the rows it takes (made once: a machine's first
        /// settings are interned process-wide).
        let freshMachine: EntitlementMachine
        init(_ settings: EngineSettings, _ bounds: FleetChecker.Bounds) {
            self.settings = settings
            authorize = bounds.authorize
            preauthorize = bounds.preauthorize
            platform = bounds.platform
            configuration = platform ? FleetModel.platformConfiguration : FleetModel.configuration
            subscription = bounds.subscription
            stepUp = bounds.stepUp
            lostWrites = bounds.lostWrites
            lateAnswers = bounds.lateAnswers
            var machine = EntitlementMachine(settings: settings, deviceID: FleetModel.deviceID)
            machine.recordsTransitions = true
            freshMachine = machine
        }
    }
    let constants: Constants
    /// Every node's settings.
    var settings: EngineSettings { constants.settings }

    /// `count` configured nodes of one device, an empty store, no session.
    init(nodes count: Int, bounds: FleetChecker.Bounds) {
        constants = Constants(
            Self.settings(secondScreen: bounds.secondScreen, stepUp: bounds.stepUp, subscription: bounds.subscription, platform: bounds.platform), bounds)
        now = Self.start
        callsLeft = bounds.calls
        userActionsLeft = bounds.userActions
        faultsLeft = bounds.faults
        nodes = []
        for _ in 0..<count {
            nodes.append(Node(machine: constants.freshMachine, generation: 0))
            start(node: nodes.count - 1)
        }
        problems = []
    }

    /// The node's name in a script: `main`, `b`, `c`, ….
    static func name(_ node: Int) -> String { node == 0 ? "main" : String(UnicodeScalar(UInt8(97 + node))) }

    /// The service, the pages and the redirects, hashed.
    private var computedWorldHash: Int {
        var hasher = Hasher()
        hasher.combine(service.session?.code)
        hasher.combine(service.session?.redirect)
        hasher.combine(service.session?.loggedIn)
        hasher.combine(service.lastCode)
        hasher.combine(service.profile)
        hasher.combine(service.profileIssued)
        hasher.combine(service.logoutReturns)
        hasher.combine(service.lastLogout)
        hasher.combine(service.transactionsIssued)
        hasher.combine(service.transactionsUsed)
        hasher.combine(service.grantedAfterLogout)
        hasher.combine(service.openAsked)
        hasher.combine(service.subscriptionIssued)
        hasher.combine(service.subscriptionValid)
        hasher.combine(service.subscriptionRenewed)
        hasher.combine(service.subscriptionSignedOut)
        hasher.combine(service.subscriptionStored)
        hasher.combine(service.platformSignedIn)
        hasher.combine(service.decisionsMade)
        hasher.combine(pages.count)
        for page in pages {
            hasher.combine(page.seq)
            hasher.combine(page.kind)
            hasher.combine(page.used)
        }
        hasher.combine(redirects.count)
        for redirect in redirects {
            hasher.combine(redirect.url)
            hasher.combine(redirect.deliveries)
        }
        return hasher.finalize()
    }

    /// Every field that decides what can happen next, hashed (each node's part computed once while it
    /// stays the same).
    mutating func fingerprint() -> Int {
        var hasher = Hasher()
        for index in nodes.indices {
            if let hash = nodes[index].hash {
                hasher.combine(hash)
            } else {
                let hash = nodes[index].computedHash
                nodes[index].hash = hash
                hasher.combine(hash)
            }
        }
        hasher.combine(store.tokensHash)
        hasher.combine(store.beforeHash)
        hasher.combine(lostWrite)
        hasher.combine(store.version)
        hasher.combine(store.up)
        if let worldHash {
            hasher.combine(worldHash)
        } else {
            let hash = computedWorldHash
            worldHash = hash
            hasher.combine(hash)
        }
        hasher.combine(now)
        hasher.combine(callsLeft)
        hasher.combine(userActionsLeft)
        hasher.combine(faultsLeft)
        hasher.combine(validFromPage)
        hasher.combine(lastLoginPage)
        hasher.combine(newestLoginRedirect)
        hasher.combine(chosenFromPage)
        hasher.combine(newestLoginDelivered)
        hasher.combine(newestPageOpened)
        hasher.combine(sawFailure)
        hasher.combine(transactionsBeforeLogout)
        hasher.combine(openAskedBeforeLogout)
        hasher.combine(decisionsBeforeLogout)
        return hasher.finalize()
    }
}
