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

    /// Runs `scenario`, recording it into `recorder` when one is given.
    public func run(_ scenario: Scenario, recorder: TraceRecorder? = nil) async -> ScenarioResult {
        let start = ContinuousClock.now
        let clock = ManualClock()
        let simulator = Simulator(world: scenario.world, clock: clock, seed: SimulatedSession.defaultSeed &+ 100)
        var server: SimulatorServer?
        var backend: (any EntitlementBackend)?
        if transport == .http {
            do {
                let running = try SimulatorServer(
                    listener: try HTTPListener(), service: SimulatedV2Service(simulator: simulator, throttles: false),
                    limits: HTTPServerLimits(shutdownGrace: .milliseconds(100)))
                server = running
                backend = V2Client(
                    transport: URLSessionV2Transport(baseURL: running.url, timeout: Self.httpTimeout, pacing: .afterThrottleOnly),
                    softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: scenario.world.serviceProvider, clock: clock)
            } catch {
                return ScenarioResult(
                    name: scenario.name, file: scenario.file,
                    failure: ScenarioFailure(
                        file: scenario.file, line: 1, step: "start the HTTP server", expected: "a server on 127.0.0.1",
                        actual: "\(error)", context: []),
                    milliseconds: 0, transitionsExercised: [], secretsMinted: [])
            }
        }
        let session = SimulatedSession(
            world: scenario.world, deviceID: scenario.deviceID, settings: scenario.settings, clock: clock, simulator: simulator,
            deliversInOrder: true, recorder: recorder, platformSSO: scenario.platformSSO, overV2Wire: transport == .v2Wire,
            backend: backend)
        var run = Run(scenario: scenario, session: session)
        let failure = await run.execute()
        await server?.shutdown()
        let elapsed = ContinuousClock.now - start
        return ScenarioResult(
            name: scenario.name, file: scenario.file, failure: failure, milliseconds: Int(elapsed.milliseconds),
            transitionsExercised: session.ledger.transitions, secretsMinted: await session.simulator.issuedSecrets)
    }
}

/// The state of one run.
private struct Run {
    let scenario: Scenario
    let session: SimulatedSession
    var pending: [ObservedCallback] = []
    var captures: [String: ScenarioValue] = [:]
    var history: [String] = []

    init(scenario: Scenario, session: SimulatedSession) {
        self.scenario = scenario
        self.session = session
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
        if let extra = pending.first {
            return failure(at: last, "end of script", Stop(expected: "no more callbacks", actual: extra.redactedDescription))
        }
        if !scenario.allowsPendingCalls, let held = await session.stepped?.heldRequests(), let operation = held.first {
            return failure(
                at: last, "end of script",
                Stop(
                    expected: "no backend answer still held",
                    actual: "a \(operation.rawValue) answer is still held: `! backend releases \(operation.rawValue)`, or say `allow pending calls`"))
        }
        let problems = session.ledger.violations().filter {
            !(scenario.allowsPendingCalls && $0.hasSuffix("got no terminal callback"))
        }
        if let problem = problems.first {
            return failure(at: last, "end of script", Stop(expected: "every call answered exactly once", actual: problem))
        }
        return nil
    }

    private func failure(at line: Int, _ step: String, _ stop: Stop) -> ScenarioFailure {
        ScenarioFailure(
            file: scenario.file, line: line, step: step, expected: stop.expected, actual: stop.actual,
            context: Array(history.suffix(ScenarioRunner.contextLines)))
    }

    // MARK: - Steps

    private mutating func perform(_ step: Step) async throws(Stop) {
        switch step.kind {
        case .expect(let expectation):
            guard !pending.isEmpty else { throw Stop(expected: describe(expectation), actual: "no callback") }
            let observed = pending.removeFirst()
            guard match(expectation, observed) else {
                throw Stop(expected: describe(expectation), actual: observed.redactedDescription)
            }
            history.append("\(step.line): < \(observed.redactedDescription)")
        case .expectNothing:
            if let extra = pending.first { throw Stop(expected: "no callback", actual: extra.redactedDescription) }
        case .expectInAnyOrder(let expectations):
            try matchInAnyOrder(expectations, line: step.line)
        case .call(let call):
            try requireNothingPending()
            history.append("\(step.line): \(step.text)")
            try await perform(call)
            await absorb()
        case .act(let action):
            try requireNothingPending()
            history.append("\(step.line): \(step.text)")
            try await perform(action)
            await absorb()
        }
    }

    private func requireNothingPending() throws(Stop) {
        if let extra = pending.first {
            throw Stop(expected: "every earlier callback to be expected first", actual: "unexpected \(extra.redactedDescription)")
        }
    }

    /// Lets the engine settle and queues what it emitted (minus ignored callbacks; with the backend
    /// requests in between when the script checks them).
    private mutating func absorb() async {
        await session.settle()
        let observed =
            scenario.checksBackendRequests
            ? session.ledger.takeEntries().map(ObservedCallback.init) : session.ledger.take().map(ObservedCallback.init)
        pending += observed.filter { !scenario.ignored.contains($0.name) }
    }

    /// The next `expectations.count` callbacks, each matched to the first expectation of the block
    /// still unmatched that it fits.
    private mutating func matchInAnyOrder(_ expectations: [Expectation], line: Int) throws(Stop) {
        var unmatched = expectations
        while !unmatched.isEmpty {
            let described = unmatched.map { describe($0) }.joined(separator: "; ")
            guard !pending.isEmpty else { throw Stop(expected: "in any order: \(described)", actual: "no callback") }
            let observed = pending.removeFirst()
            var found: Int?
            for (index, expectation) in unmatched.enumerated() where match(expectation, observed) {
                found = index
                break
            }
            guard let index = found else {
                throw Stop(expected: "one of, in any order: \(described)", actual: observed.redactedDescription)
            }
            unmatched.remove(at: index)
            history.append("\(line): < \(observed.redactedDescription)")
        }
    }

    // MARK: - Calls

    private mutating func perform(_ call: CallStep) async throws(Stop) {
        let enabler = session.enabler
        switch call {
        case .setRequestor(let requestor, let providers):
            await enabler.setRequestor(try text(requestor), serviceProviders: try providers.map { p throws(Stop) in try text(p) })
        case .setOptions(let pairs):
            var options: [String: String] = [:]
            for (key, value) in pairs { options[key] = try text(value) }
            do {
                try await enabler.setOptions(options)
            } catch {
                if case .unknownKeys(let keys) = error { pending.append(ObservedCallback(optionsRefused: keys)) }
            }
        case .checkAuthentication: await enabler.checkAuthentication()
        case .getAuthentication(let force, let data): await enabler.getAuthentication(forceAuthn: force, data: try texts(data))
        case .setSelectedProvider(let id): await enabler.setSelectedProvider(try optionalText(id))
        case .handleExternalURL(let url): await enabler.handleExternalURL(try text(url))
        case .getSelectedProvider: await enabler.getSelectedProvider()
        case .checkAuthorization(let resource, let data):
            await enabler.checkAuthorization(try text(resource), data: try texts(data))
        case .getAuthorization(let resource, let data):
            await enabler.getAuthorization(try text(resource), data: try texts(data))
        case .checkPreauthorizedResources(let resources, let cache):
            guard case .list(let items) = try resolve(resources) else {
                throw Stop(expected: "a [list] of resources", actual: "\(resources)")
            }
            let names = try items.map { item throws(Stop) -> String in
                guard case .text(let name) = item else { throw Stop(expected: "resource ids", actual: item.description) }
                return name
            }
            await enabler.checkPreauthorizedResources(names, cache: cache)
        case .getMetadata(let key): await enabler.getMetadata(key)
        case .logout: await enabler.logout()
        }
    }

    // MARK: - World actions

    private mutating func perform(_ action: WorldAction) async throws(Stop) {
        switch action {
        case .logIn(let user, let password, let holding):
            let url = try lastNavigation()
            let visit = await session.userAgent.logIn(at: url, username: try text(user), password: try text(password))
            try await arrive(visit, holding: holding)
        case .cancelAtProvider(let holding):
            let visit = await session.userAgent.cancelLogin(at: try lastNavigation())
            try await arrive(visit, holding: holding)
        case .closeLoginPage:
            await session.enabler.setSelectedProvider(nil)
        case .platform(let choice):
            session.platform?.script(choice)
        case .platformSignIn(let username):
            session.platform?.signIn(username)
        case .platformSignOut:
            session.platform?.signOut()
        case .resetTempPass:
            await session.simulator.resetTempPass(deviceID: scenario.deviceID)
        case .activate(let code, let user, let password):
            _ = await session.userAgent.activate(code: try text(code), username: try text(user), password: try text(password))
        case .followLogout(let holding):
            let visit = await session.userAgent.follow(try lastNavigation())
            try await arrive(visit, holding: holding)
        case .advanceClock(let duration):
            await session.clock.advance(by: duration)
        case .fail(let operation, let fault, let untilHealed):
            await session.simulator.inject(fault, into: operation, times: untilHealed ? nil : 1)
        case .heal(let operation):
            await session.simulator.heal(operation)
        case .hold(let operation):
            await session.stepped?.hold(operation)
        case .release(let operation):
            await session.stepped?.release(operation)
        case .attack(let url, let edits):
            var crafted = try text(url)
            for edit in edits { crafted = try apply(edit, to: crafted) }
            history.append("   attacker delivers \(Redactor.redact(crafted))")
            await session.enabler.handleExternalURL(crafted)
        }
    }

    private func lastNavigation() throws(Stop) -> String {
        guard let url = session.lastNavigation else {
            throw Stop(expected: "a navigateToUrl for the web view to open", actual: "none so far")
        }
        return url
    }

    /// Where a web-view visit ended: hand the app URL to the engine, hold it, or note the page.
    private mutating func arrive(_ visit: SimulatedUserAgent.Visit, holding: String?) async throws(Stop) {
        switch visit.outcome {
        case .reachedApp(let url):
            if let holding {
                captures[holding] = .text(url)
            } else {
                await session.enabler.handleExternalURL(url)
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
