import EntitlementEngine
import EntitlementProviders
import EntitlementSimulator

/// The state of one run: every engine of the script, each with what it emitted and not yet matched.
struct ScenarioRun {
    /// What the engines share: the script, the clock, the simulator and how to reach it.
    struct World: Sendable {
        let scenario: Scenario
        let clock: ManualClock
        let simulator: Simulator
        let overV2Wire: Bool
        /// A backend for a new engine (over HTTP), or nil for the simulator's own.
        let backend: @Sendable () -> (any EntitlementBackend)?
        /// How a server-based provider reaches the programmer's service `id`: over HTTP, or nil in process.
        var programmerURL: @Sendable (String) -> String? = { _ in nil }
        /// Where a subscription provider's Security API `id` answers over HTTP (its `ENDPOINT`), or nil in process.
        var securityAPIBase: @Sendable (String) -> String? = { _ in nil }
        /// Where the programmer's service `id` takes the user's PIN for a step-up over HTTP, or nil in process.
        var stepUpURL: @Sendable (String) -> String? = { _ in nil }

        /// The provider chain for a new engine: the world's providers, server-based ones on their transport.
        func providerChain() -> ProviderChain? {
            var servers: [String: any EntitlementProvider] = [:]
            for declared in scenario.world.chainProviders where declared.kind == .server {
                let transport: any ProviderTransport =
                    programmerURL(declared.id).map { _ in HTTPProviderTransport(timeout: ScenarioRunner.httpPatience) }
                    ?? SimulatedProgrammerTransport(simulator: simulator, serverID: declared.id)
                servers[declared.id] = ServerAuthorizationProvider(
                    id: declared.id, url: programmerURL(declared.id) ?? "sim://programmer/\(declared.id)/authorize",
                    resources: declared.grants.union(declared.denials.keys), transport: transport,
                    decorate: { $0.headers["Authorization"] = "Bearer programmer-key" })
            }
            for declared in scenario.world.chainProviders where declared.kind == .subscription {
                let base = securityAPIBase(declared.id)
                let transport: any ProviderTransport =
                    base.map { _ in HTTPProviderTransport(timeout: ScenarioRunner.httpPatience) }
                    ?? SimulatedSecurityAPITransport(simulator: simulator, providerID: declared.id)
                servers[declared.id] = DirectSubscriptionProvider(
                    id: declared.id,
                    endpoints: .init(base: base ?? "sim://security-api/\(declared.id)", renews: declared.renews),
                    verificationInterval: declared.verificationInterval, transport: transport)
            }
            return simulator.providerChain(others: servers)
        }
    }

    /// One engine: its current life, the app playing its delegate, and its unmatched callbacks.
    struct Engine {
        var session: SimulatedSession
        var app: ScriptedApp
        /// This life's access to the shared store, cut when the process dies.
        var storage: ProcessStorage
        var pending: [ObservedCallback] = []
        /// Earlier lives (`! engine restarts`): their unanswered calls died with them.
        var retired: [SimulatedSession] = []
    }

    let world: World
    var scenario: Scenario { world.scenario }
    var engines: [String: Engine] = [:]
    var storages: [String: ForgetfulStorage] = [:]
    var captures: [String: ScenarioValue] = [:]
    var history: [String] = []

    init(_ world: World, recorder: (any EngineMonitor)?) {
        self.world = world
        for name in world.scenario.engineNames { engines[name] = start(name, recorder: name == Scenario.mainEngine ? recorder : nil) }
    }

    /// The device id of engine `name`.
    func deviceID(_ name: String) -> String {
        guard let declaration = scenario.engine(named: name) else { return scenario.deviceID }
        return declaration.deviceID ?? declaration.storage.map(deviceID) ?? name
    }

    /// The storage of engine `name`: its own, or the one it shares.
    mutating func storage(_ name: String) -> ForgetfulStorage {
        let owner = storageOwner(name)
        if let existing = storages[owner] { return existing }
        let storage = ForgetfulStorage()
        storages[owner] = storage
        return storage
    }

    /// The engine whose store engine `name` uses (itself unless it shares one).
    func storageOwner(_ name: String) -> String {
        scenario.engine(named: name)?.storage.map(storageOwner) ?? name
    }

    /// A new life of engine `name` on its device and storage (and, after a restart, the device's
    /// platform account as the last life left it).
    mutating func start(_ name: String, recorder: (any EngineMonitor)?, platform: SimulatedPlatform? = nil) -> Engine {
        let app = ScriptedApp()
        let declaration = scenario.engine(named: name)
        let platformSSO = declaration?.platformSSO ?? scenario.platformSSO
        let shared = storage(name)
        let seen: any TokenStorage =
            (declaration?.synced ?? false)
            ? SyncedStorage(inner: shared, ownerDeviceID: deviceID(storageOwner(name))) : shared
        let access = ProcessStorage(seen)
        let session = SimulatedSession(
            world: scenario.world, deviceID: deviceID(name), settings: scenario.settings, storage: access, clock: world.clock,
            simulator: world.simulator, delegate: app, deliversInOrder: true, recorder: recorder, platformSSO: platformSSO,
            overV2Wire: world.overV2Wire, backend: world.backend(), platform: platform, providers: world.providerChain())
        app.attach(session.enabler)
        return Engine(session: session, app: app, storage: access)
    }

    /// The transitions every engine took, in every life.
    var transitions: Set<TransitionRow> {
        engines.values.reduce(into: []) { all, engine in
            all.formUnion(engine.session.ledger.transitions)
            for retired in engine.retired { all.formUnion(retired.ledger.transitions) }
        }
    }

    /// Thrown by a step to stop the run.
    struct Stop: Error {
        let expected: String
        let actual: String
    }

    mutating func execute() async -> ScenarioFailure? {
        for step in scenario.steps {
            do {
                try await perform(step)
            } catch {
                return failure(at: step.line, step.text, error)
            }
        }
        let last = scenario.steps.last?.line ?? 1
        for name in scenario.engineNames {
            guard let engine = engines[name] else { continue }
            if let extra = engine.pending.first {
                return failure(at: last, "end of script", Stop(expected: "no more callbacks", actual: label(name) + extra.redactedDescription))
            }
            if !scenario.allowsPendingCalls, let held = await engine.session.stepped?.heldRequests(), let operation = held.first {
                return failure(
                    at: last, "end of script",
                    Stop(
                        expected: "no backend answer still held",
                        actual: "a \(operation.rawValue) answer is still held: `! backend releases \(operation.rawValue)`, or say `allow pending calls`"))
            }
            if !scenario.allowsPendingCalls, let held = await engine.session.steppedProviders?.heldRequests().first {
                return failure(
                    at: last, "end of script",
                    Stop(
                        expected: "no provider answer still held",
                        actual: "a request to \(held.provider) is still held: `! provider \(held.provider) releases its answers`, or say `allow pending calls`"))
            }
            if let unused = engine.app.unused.first {
                return failure(
                    at: last, "end of script",
                    Stop(expected: "every `! app on … will call` used", actual: label(name) + "no \(unused) arrived to make the call from"))
            }
            let lost = engine.retired.flatMap { $0.ledger.violations().filter { !$0.hasSuffix("got no terminal callback") } }
            let problems = lost + engine.session.ledger.violations().filter {
                !(scenario.allowsPendingCalls && $0.hasSuffix("got no terminal callback"))
            }
            if let problem = problems.first {
                return failure(at: last, "end of script", Stop(expected: "every call answered exactly once", actual: label(name) + problem))
            }
        }
        return nil
    }

    /// `@name ` for an engine other than main, for reports.
    func label(_ name: String) -> String { name == Scenario.mainEngine ? "" : "@\(name) " }

    private func failure(at line: Int, _ step: String, _ stop: Stop) -> ScenarioFailure {
        ScenarioFailure(
            file: scenario.file, line: line, step: step, expected: stop.expected, actual: stop.actual,
            context: Array(history.suffix(ScenarioRunner.contextLines)))
    }
}
