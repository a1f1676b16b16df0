import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSimulatorServer

/// Runs a ``Scenario`` against the real `AccessEnabler` on the simulator, with a manual clock,
/// seeded randomness and answers delivered in operation order: the same result every run.
///
/// Exhaustive, like TCA's TestStore: every callback must be expected, in order, before the next
/// `>` or `!` step and by the end of the script; a missing, extra or different callback fails
/// the run with the line, the expectation, what happened and what came just before. The run also
/// fails if any call was answered twice or by the wrong kind of callback, or (unless the script
/// says `allow pending calls`) was never answered.
public struct ScenarioRunner: Sendable {
    /// How many earlier lines a failure report shows.
    public static let contextLines = 5

    /// How the engine reaches the simulator.
    public enum Transport: Sendable, Hashable {
        /// The simulator's in-process port.
        case inProcess
        /// REST API V2's JSON in process: a `V2Client` on the simulator's `SimulatedV2Service`.
        case v2Wire
        /// REST API V2 over HTTP on loopback: a `V2Client` on `URLSessionV2Transport`, talking to a
        /// `SimulatorServer` (what `entitle serve` runs) of the scenario's simulator on an ephemeral
        /// port. Injected faults happen on the socket: a reset mid-body, an answer held past the
        /// client's timeout.
        case http
    }

    /// How the engine reaches the simulator.
    public var transport: Transport

    /// How long the HTTP client waits for an answer when `transport` is `.http`: a `timeout` fault
    /// holds the answer, so this is what one costs.
    public static let httpTimeout: Duration = .seconds(5)

    /// A runner; `overV2Wire` routes every backend request through V2's JSON.
    public init(overV2Wire: Bool = false) { self.transport = overV2Wire ? .v2Wire : .inProcess }

    /// A runner on `transport`.
    public init(transport: Transport) { self.transport = transport }

    /// Runs `scenario`, recording it into `recorder` when one is given (the `main` engine's first life).
    public func run(_ scenario: Scenario, recorder: TraceRecorder? = nil) async -> ScenarioResult {
        let start = ContinuousClock.now
        let clock = ManualClock()
        let simulator = Simulator(world: scenario.world, clock: clock, seed: SimulatedSession.defaultSeed &+ 100)
        var server: SimulatorServer?
        if transport == .http {
            do {
                server = try SimulatorServer(
                    listener: try HTTPListener(), service: SimulatedV2Service(simulator: simulator, throttles: false),
                    limits: HTTPServerLimits(shutdownGrace: .milliseconds(100)))
            } catch {
                return ScenarioResult(
                    name: scenario.name, file: scenario.file,
                    failure: ScenarioFailure(
                        file: scenario.file, line: 1, step: "start the HTTP server", expected: "a server on 127.0.0.1",
                        actual: "\(error)", context: []),
                    milliseconds: 0, transitionsExercised: [], secretsMinted: [])
            }
        }
        let serverURL = server?.url
        let world = Run.World(
            scenario: scenario, clock: clock, simulator: simulator, overV2Wire: transport == .v2Wire,
            backend: { @Sendable () -> (any EntitlementBackend)? in
                // Over HTTP every engine has a client of its own, as every backend instance would.
                serverURL.map { url in
                    V2Client(
                        transport: URLSessionV2Transport(baseURL: url, timeout: Self.httpTimeout, pacing: .afterThrottleOnly),
                        softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: scenario.world.serviceProvider,
                        clock: clock)
                }
            })
        var run = Run(world, recorder: recorder)
        let failure = await run.execute()
        await server?.shutdown()
        let elapsed = ContinuousClock.now - start
        return ScenarioResult(
            name: scenario.name, file: scenario.file, failure: failure, milliseconds: Int(elapsed.milliseconds),
            transitionsExercised: run.transitions, secretsMinted: await simulator.issuedSecrets)
    }
}

/// The state of one run: every engine of the script, each with what it emitted and not yet matched.
private struct Run {
    /// What the engines share: the script, the clock, the simulator and how to reach it.
    struct World: Sendable {
        let scenario: Scenario
        let clock: ManualClock
        let simulator: Simulator
        let overV2Wire: Bool
        /// A backend for a new engine (over HTTP), or nil for the simulator's own.
        let backend: @Sendable () -> (any EntitlementBackend)?
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
    var storages: [String: any TokenStorage] = [:]
    var captures: [String: ScenarioValue] = [:]
    var history: [String] = []

    init(_ world: World, recorder: TraceRecorder?) {
        self.world = world
        for name in world.scenario.engineNames { engines[name] = start(name, recorder: name == Scenario.mainEngine ? recorder : nil) }
    }

    /// The device id of engine `name`.
    func deviceID(_ name: String) -> String {
        guard let declaration = scenario.engines.first(where: { $0.name == name }) else { return scenario.deviceID }
        return declaration.deviceID ?? declaration.storage.map(deviceID) ?? name
    }

    /// The storage of engine `name`: its own, or the one it shares.
    mutating func storage(_ name: String) -> any TokenStorage {
        let owner = scenario.engines.first { $0.name == name }?.storage.map { self.storageOwner($0) } ?? name
        if let existing = storages[owner] { return existing }
        let storage = InMemoryTokenStorage()
        storages[owner] = storage
        return storage
    }

    private func storageOwner(_ name: String) -> String {
        scenario.engines.first { $0.name == name }?.storage.map(storageOwner) ?? name
    }

    /// A new life of engine `name` on its device and storage (and, after a restart, the device's
    /// platform account as the last life left it).
    mutating func start(_ name: String, recorder: TraceRecorder?, platform: SimulatedPlatform? = nil) -> Engine {
        let app = ScriptedApp()
        let platformSSO = scenario.engines.first { $0.name == name }?.platformSSO ?? scenario.platformSSO
        let declaration = scenario.engines.first { $0.name == name }
        let shared = storage(name)
        let seen: any TokenStorage =
            (declaration?.synced ?? false)
            ? SyncedStorage(inner: shared, ownerDeviceID: deviceID(storageOwner(name))) : shared
        let access = ProcessStorage(seen)
        let session = SimulatedSession(
            world: scenario.world, deviceID: deviceID(name), settings: scenario.settings, storage: access, clock: world.clock,
            simulator: world.simulator, delegate: app, deliversInOrder: true, recorder: recorder, platformSSO: platformSSO,
            overV2Wire: world.overV2Wire, backend: world.backend(), platform: platform)
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

    // MARK: - Steps

    private mutating func perform(_ step: Step) async throws(Stop) {
        let name = step.engine ?? Scenario.mainEngine
        let tag = label(name)
        switch step.kind {
        case .expect(let expectation):
            guard let observed = engines[name]?.pending.first else {
                throw Stop(expected: tag + describe(expectation), actual: "no callback")
            }
            engines[name]?.pending.removeFirst()
            guard match(expectation, observed) else {
                throw Stop(expected: tag + describe(expectation), actual: tag + observed.redactedDescription)
            }
            history.append("\(step.line): < \(tag)\(observed.redactedDescription)")
        case .expectNothing:
            if let extra = engines[name]?.pending.first { throw Stop(expected: "no callback", actual: tag + extra.redactedDescription) }
        case .expectInAnyOrder(let expectations):
            try matchInAnyOrder(expectations, engine: name, line: step.line)
        case .call(let call):
            try requireNothingPending()
            history.append("\(step.line): \(step.text)")
            try await perform(call, on: name)
            await absorb()
        case .act(let action):
            try requireNothingPending()
            history.append("\(step.line): \(step.text)")
            try await perform(action, on: name)
            await absorb()
        }
    }

    private func requireNothingPending() throws(Stop) {
        for name in scenario.engineNames {
            if let extra = engines[name]?.pending.first {
                throw Stop(expected: "every earlier callback to be expected first", actual: "unexpected \(label(name))\(extra.redactedDescription)")
            }
        }
    }

    /// Lets every engine settle — and the calls their app made from inside callbacks run — and
    /// queues what each emitted (minus ignored callbacks; with the backend requests in between
    /// when the script checks them).
    private mutating func absorb() async {
        var settling = true
        while settling {
            settling = false
            for name in scenario.engineNames {
                guard let engine = engines[name] else { continue }
                await engine.session.settle()
                if await engine.app.finishCalls() { settling = true }
            }
        }
        for name in scenario.engineNames {
            guard let ledger = engines[name]?.session.ledger else { continue }
            let observed = scenario.checksBackendRequests ? ledger.takeEntries().map(ObservedCallback.init) : ledger.take().map(ObservedCallback.init)
            let ignored = scenario.ignored
            engines[name]?.pending += observed.filter { !ignored.contains($0.name) }
        }
    }

    /// The next `expectations.count` callbacks of engine `name`, each matched to the first
    /// expectation of the block still unmatched that it fits.
    private mutating func matchInAnyOrder(_ expectations: [Expectation], engine name: String, line: Int) throws(Stop) {
        var unmatched = expectations
        let tag = label(name)
        while !unmatched.isEmpty {
            let described = unmatched.map { describe($0) }.joined(separator: "; ")
            guard let observed = engines[name]?.pending.first else {
                throw Stop(expected: "\(tag)in any order: \(described)", actual: "no callback")
            }
            engines[name]?.pending.removeFirst()
            var found: Int?
            for (index, expectation) in unmatched.enumerated() where match(expectation, observed) {
                found = index
                break
            }
            guard let index = found else {
                throw Stop(expected: "\(tag)one of, in any order: \(described)", actual: tag + observed.redactedDescription)
            }
            unmatched.remove(at: index)
            history.append("\(line): < \(tag)\(observed.redactedDescription)")
        }
    }

    // MARK: - Calls

    /// An engine call with its arguments resolved; it returns the `optionsRefused` pseudo-callback
    /// of a refused `setOptions`.
    typealias ResolvedCall = @Sendable (AccessEnabler) async -> ObservedCallback?

    private mutating func perform(_ call: CallStep, on name: String) async throws(Stop) {
        guard let engine = engines[name] else { return }
        let resolved = try resolve(call)
        if let refused = await resolved(engine.session.enabler) { engines[name]?.pending.append(refused) }
    }

    /// `call` with every `$name` resolved now.
    private func resolve(_ call: CallStep) throws(Stop) -> ResolvedCall {
        switch call {
        case .setRequestor(let requestor, let providers):
            let (id, urls) = (try text(requestor), try providers.map { p throws(Stop) in try text(p) })
            return { await $0.setRequestor(id, serviceProviders: urls); return nil }
        case .setOptions(let pairs):
            var options: [String: String] = [:]
            for (key, value) in pairs { options[key] = try text(value) }
            return { [options] enabler in
                do throws(AccessEnabler.OptionsError) {
                    try await enabler.setOptions(options)
                } catch {
                    if case .unknownKeys(let keys) = error { return ObservedCallback(optionsRefused: keys) }
                }
                return nil
            }
        case .checkAuthentication: return { await $0.checkAuthentication(); return nil }
        case .getAuthentication(let force, let data):
            let values = try texts(data)
            return { await $0.getAuthentication(forceAuthn: force, data: values); return nil }
        case .setSelectedProvider(let id):
            let chosen = try optionalText(id)
            return { await $0.setSelectedProvider(chosen); return nil }
        case .handleExternalURL(let url):
            let value = try text(url)
            return { await $0.handleExternalURL(value); return nil }
        case .getSelectedProvider: return { await $0.getSelectedProvider(); return nil }
        case .checkAuthorization(let resource, let data):
            let (id, values) = (try text(resource), try texts(data))
            return { await $0.checkAuthorization(id, data: values); return nil }
        case .getAuthorization(let resource, let data):
            let (id, values) = (try text(resource), try texts(data))
            return { await $0.getAuthorization(id, data: values); return nil }
        case .checkPreauthorizedResources(let resources, let cache):
            guard case .list(let items) = try resolve(resources) else {
                throw Stop(expected: "a [list] of resources", actual: "\(resources)")
            }
            let names = try items.map { item throws(Stop) -> String in
                guard case .text(let name) = item else { throw Stop(expected: "resource ids", actual: item.description) }
                return name
            }
            return { await $0.checkPreauthorizedResources(names, cache: cache); return nil }
        case .getMetadata(let key): return { await $0.getMetadata(key); return nil }
        case .logout: return { await $0.logout(); return nil }
        }
    }

    // MARK: - World actions

    private mutating func perform(_ action: WorldAction, on name: String) async throws(Stop) {
        guard let engine = engines[name] else { return }
        let session = engine.session
        switch action {
        case .logIn(let user, let password, let holding):
            let url = try lastNavigation(of: name)
            let visit = await session.userAgent.logIn(at: url, username: try text(user), password: try text(password))
            try await arrive(visit, holding: holding, at: session.enabler)
        case .cancelAtProvider(let holding):
            let visit = await session.userAgent.cancelLogin(at: try lastNavigation(of: name))
            try await arrive(visit, holding: holding, at: session.enabler)
        case .closeLoginPage:
            await session.enabler.setSelectedProvider(nil)
        case .platform(let choice):
            session.platform?.script(choice)
        case .platformAnswer(let choice):
            guard session.platform?.answerOpenPicker(choice) == true else {
                throw Stop(expected: "a platform picker held open (`! platform user will keep the picker open`)", actual: "none is open")
            }
        case .platformSignIn(let username):
            session.platform?.signIn(username)
        case .platformSignOut:
            session.platform?.signOut()
        case .resetTempPass:
            await world.simulator.resetTempPass(deviceID: deviceID(name))
        case .activate(let code, let user, let password):
            _ = await session.userAgent.activate(code: try text(code), username: try text(user), password: try text(password))
        case .followLogout(let holding):
            let visit = await session.userAgent.follow(try lastNavigation(of: name))
            try await arrive(visit, holding: holding, at: session.enabler)
        case .advanceClock(let duration):
            await world.clock.advance(by: duration)
        case .fail(let operation, let fault, let untilHealed):
            await world.simulator.inject(fault, into: operation, times: untilHealed ? nil : 1)
        case .heal(let operation):
            await world.simulator.heal(operation)
        case .hold(let operation):
            // Holding is the world's: every engine's answers of that operation wait.
            for other in engines.values { await other.session.stepped?.hold(operation) }
        case .release(let operation):
            for other in engines.values { await other.session.stepped?.release(operation) }
        case .attack(let url, let edits):
            var crafted = try text(url)
            for edit in edits { crafted = try apply(edit, to: crafted) }
            history.append("   attacker delivers \(Redactor.redact(crafted))")
            await session.enabler.handleExternalURL(crafted)
        case .failSaves(let untilHealed):
            engine.storage.failSaves(untilHealed: untilHealed)
        case .healStorage:
            engine.storage.heal()
        case .restartEngine:
            // The process dies: the old engine is cut from the store and the backend (what it was
            // waiting for fails at once and reaches only its own, unchecked, ledger).
            engine.storage.end()
            await session.stepped?.sever()
            await session.settle()
            var restarted = start(name, recorder: nil, platform: session.platform)
            restarted.retired = engine.retired + [session]
            restarted.pending = engine.pending
            engines[name] = restarted
        case .callFromCallback(let callback, let call):
            let resolved = try resolve(call)
            engine.app.on(callback) { _ = await resolved($0) }
        }
    }

    private func lastNavigation(of name: String) throws(Stop) -> String {
        guard let url = engines[name]?.session.lastNavigation else {
            throw Stop(expected: "a navigateToUrl for the web view to open", actual: "none so far")
        }
        return url
    }

    /// Where a web-view visit ended: hand the app URL to the engine, hold it, or note the page.
    private mutating func arrive(_ visit: SimulatedUserAgent.Visit, holding: String?, at enabler: AccessEnabler) async throws(Stop) {
        switch visit.outcome {
        case .reachedApp(let url):
            if let holding {
                captures[holding] = .text(url)
            } else {
                await enabler.handleExternalURL(url)
            }
        case .stoppedAt(let page):
            history.append("   web view stopped at '\(page.title)'" + (page.message.map { ": \($0)" } ?? ""))
            if let holding { throw Stop(expected: "a redirect to the app to hold as $\(holding)", actual: "the web view stopped at '\(page.title)'") }
        case .failed(let status, let message):
            throw Stop(expected: "the web view to reach the app", actual: "HTTP \(status): \(message)")
        }
    }

    private func apply(_ edit: URLEdit, to url: String) throws(Stop) -> String {
        var base = url
        var query: [(String, String)] = []
        if let mark = url.firstIndex(of: "?") {
            base = String(url[..<mark])
            for pair in url[url.index(after: mark)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = (try? PercentEncoding.decode(parts[0])) ?? String(parts[0])
                let value = parts.count > 1 ? ((try? PercentEncoding.decode(parts[1])) ?? String(parts[1])) : ""
                query.append((name, value))
            }
        }
        switch edit {
        case .set(let name, let value):
            let replacement = try text(value)
            if let index = query.firstIndex(where: { $0.0 == name }) {
                query[index].1 = replacement
            } else {
                query.append((name, replacement))
            }
        case .remove(let name): query.removeAll { $0.0 == name }
        case .append(let name, let value): query.append((name, try text(value)))
        case .base(let value): base = try text(value)
        }
        return PercentEncoding.url(base, query: query)
    }

    // MARK: - Values and matching

    private func resolve(_ expression: ValueExpression) throws(Stop) -> ScenarioValue {
        switch expression {
        case .text(let text): return .text(text)
        case .none: return .none
        case .list(let items): return .list(try items.map { item throws(Stop) in try resolve(item) })
        case .reference(let name):
            guard let value = captures[name] else { throw Stop(expected: "$\(name) to be captured earlier", actual: "nothing captured as $\(name)") }
            return value
        }
    }

    private func text(_ expression: ValueExpression) throws(Stop) -> String {
        guard case .text(let text) = try resolve(expression) else {
            throw Stop(expected: "text", actual: try resolve(expression).redactedDescription)
        }
        return text
    }

    private func optionalText(_ expression: ValueExpression) throws(Stop) -> String? {
        if case .none = try resolve(expression) { return nil }
        return try text(expression)
    }

    private func texts(_ pairs: [String: ValueExpression]) throws(Stop) -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in pairs { out[key] = try text(value) }
        return out
    }

    private mutating func match(_ expectation: Expectation, _ observed: ObservedCallback) -> Bool {
        guard expectation.callback == observed.name,
            expectation.acceptsMore ? expectation.arguments.count <= observed.arguments.count
                : expectation.arguments.count == observed.arguments.count
        else { return false }
        var captured = captures
        for (pattern, value) in zip(expectation.arguments, observed.arguments) {
            guard match(pattern, value, &captured) else { return false }
        }
        captures = captured
        return true
    }

    private func match(_ pattern: Pattern, _ value: ScenarioValue, _ captured: inout [String: ScenarioValue]) -> Bool {
        switch pattern {
        case .any: return true
        case .equals(let expression):
            guard let expected = try? resolve(expression) else { return false }
            return expected == value
        case .list(let patterns):
            guard case .list(let items) = value, items.count == patterns.count else { return false }
            return zip(patterns, items).allSatisfy { match($0, $1, &captured) }
        case .matches(let regex):
            guard case .text(let text) = value, let compiled = try? Regex(regex) else { return false }
            return text.contains(compiled)
        case .capture(let name, .matches(let regex)):
            // A regular expression with a group binds what the first group matched (the `state`
            // inside a URL); without one, the whole value.
            guard case .text(let text) = value, let compiled = try? Regex(regex), let found = text.firstMatch(of: compiled)
            else { return false }
            if found.output.count > 1, let group = found.output[1].substring {
                captured[name] = .text(String(group))
            } else {
                captured[name] = value
            }
            return true
        case .capture(let name, let inner):
            guard match(inner, value, &captured) else { return false }
            captured[name] = value
            return true
        case .not(let inner):
            var scratch = captured
            return !match(inner, value, &scratch)
        }
    }

    private func describe(_ expectation: Expectation) -> String {
        let arguments = expectation.arguments.map(describe) + (expectation.acceptsMore ? ["..."] : [])
        return ([expectation.callback] + arguments).joined(separator: " ")
    }

    private func describe(_ pattern: Pattern) -> String {
        switch pattern {
        case .any: "*"
        case .equals(.reference(let name)): "$\(name)" + (captures[name].map { " (= \($0.redactedDescription))" } ?? "")
        case .equals(let expression): (try? resolve(expression).redactedDescription) ?? "?"
        case .list(let items): "[" + items.map(describe).joined(separator: ", ") + "]"
        case .matches(let regex): "~\(ScenarioValue.quote(regex))"
        case .capture(let name, let inner): "$\(name)=\(describe(inner))"
        case .not(let inner): "!\(describe(inner))"
        }
    }
}
