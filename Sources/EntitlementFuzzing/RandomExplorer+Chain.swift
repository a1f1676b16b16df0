import EntitlementEngine
import EntitlementProviders
import EntitlementScenarios
import EntitlementSimulator

/// The chain device's world: a simulated store that answers one request at a time (`store`), a
/// direct subscription (`magazine`, which renews tokens and verifies every five minutes) and the
/// programmer's own service (`live`, a PIN guarding `match-2`, a denial for `match-3`) before the TV
/// provider.
extension RandomExplorer {
    static let chainProviderIDs = ["store", "magazine", "live"]
    static let chainResources = ["film-1", "film-2", "issue-1", "issue-2", "match-1", "match-2", "match-3", "news-channel", ""]
    static let stepUpResources: Set<String> = ["match-2"]

    static let chainWorld: SimulatedWorld = {
        var world = SimulatedWorld.default
        var store = SimulatedWorld.ChainProvider(id: "store", grants: ["film-1", "film-2"])
        store.requestsOneAtATime = true
        var magazine = SimulatedWorld.ChainProvider(id: "magazine")
        magazine.kind = .subscription
        var live = SimulatedWorld.ChainProvider(id: "live", grants: ["match-1", "match-2"])
        live.kind = .server
        live.denials = ["match-3": "Not available in your region."]
        live.pin = "4321"
        live.pinProtected = stepUpResources
        world.chainProviders = [store, magazine, live]
        world.subscribers = [
            SimulatedWorld.Subscriber(username: "ann", password: "sesame", providerID: "magazine", issues: ["issue-1", "issue-2"])
        ]
        return world
    }()

    /// The chain on `simulator`'s in-process services, in the world's order.
    static func chain(on simulator: Simulator) -> ProviderChain? {
        simulator.providerChain(others: [
            "magazine": DirectSubscriptionProvider(
                id: "magazine", endpoints: .init(base: "sim://security-api/magazine", renews: true),
                verificationInterval: .seconds(300),
                transport: SimulatedSecurityAPITransport(simulator: simulator, providerID: "magazine")),
            "live": ServerAuthorizationProvider(
                id: "live", url: "sim://programmer/live/authorize", resources: ["match-1", "match-2", "match-3"],
                transport: SimulatedProgrammerTransport(simulator: simulator, serverID: "live")),
        ])
    }

    /// A step only a chain device takes: a sign-in, a step-up, or one of the chain's services changing.
    static func chainStep(_ random: inout FuzzRandom) -> ExplorerStep {
        switch Int.random(in: 0..<11, using: &random) {
        case 0, 1:
            let password = random.chance(4, in: 5) ? "sesame" : "wrong"
            return .call(.signIn(provider: random.pick(["magazine", "magazine", "live", "nope"]), credentials: ["username": "ann", "password": password]))
        case 2: return .call(.signOut(provider: random.pick(["magazine", "magazine", "live"])))
        case 3: return .call(.completeStepUp(resource: random.pick(["match-2", "match-2", "match-1"]), succeeded: random.chance(3, in: 4)))
        case 4: return .userConfirmsStepUp(rightPIN: random.chance(3, in: 4))
        case 5: return random.chance(1, in: 2) ? .subscriptionLapses(random.chance(1, in: 2)) : .subscriptionForgetsTokens
        case 6:
            let faults: [ProgrammerFault] = [.status(503), .status(401), .garbage, .notAnObject, .noAnswer]
            return .serviceFails(random.pick(["magazine", "live"]), random.pick(faults))
        case 7:
            let failures: [ProviderFailure] = [
                .networkFailure, .unavailable, .subscriptionExpired, .unknown("boom"), .cancelledByUser, .denied("No."), .invalidToken,
                .stepUpRequired(StepUpAdvice(kind: .transaction, value: "PIN", transactionID: "tx")),
            ]
            return .storeFails(random.pick(SimulatedEntitlementProvider.Question.allCases), random.pick(failures))
        case 8: return .storeGrants(random.chance(1, in: 3) ? [] : ["film-1", "film-2"].filter { _ in random.chance(2, in: 3) })
        default: return .providerHolds(random.pick(chainProviderIDs), random.chance(1, in: 2))
        }
    }
}
