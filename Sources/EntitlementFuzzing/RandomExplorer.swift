import EntitlementEngine
import EntitlementSimulator
import EntitlementTracing

/// A seeded random explorer: it drives a real engine on the simulator through random sequences of
/// calls, user actions, backend faults, storage failures and clock moves — on some devices with a
/// provider chain before the TV provider, its services misbehaving and its answers held — then
/// checks invariants:
///
/// - **exactly once**: after every fault heals and every deadline passes, each call has exactly one
///   terminal callback of a kind its call allows (the simulator's `CallLedger`);
/// - **every taken row is listed** in the transition table (the ledger checks each one);
/// - **nothing after the end**: once everything has settled, a day more passes without a callback;
/// - **a refused call changes nothing** (no region changes state when a call is refused);
/// - **a fresh login works afterwards**, whatever the run left behind;
/// - **the run's trace replays** with no divergence.
///
/// A run is a pure function of its seed: ``steps(seed:)`` makes the script, ``run(_:seed:)`` plays it.
package struct RandomExplorer: Sendable {
    /// How many steps one run takes.
    package var length: Int

    /// Creates an explorer whose runs take `length` steps.
    package init(length: Int = 40) { self.length = max(1, length) }

    /// What one run found wrong: its seed, the script, and the problems.
    package struct Failure: Error, Sendable, CustomStringConvertible {
        /// The run's seed.
        package var seed: UInt64
        /// The (shortened, where it still fails) script.
        package var steps: [ExplorerStep]
        /// What broke.
        package var problems: [String]

        /// The seed, the problems, and the script as lines.
        package var description: String {
            "seed \(seed): \(problems.joined(separator: "; "))\n" + steps.map { "  \($0)" }.joined(separator: "\n")
        }
    }

    /// The kind of device a seed plays on.
    enum Device: CaseIterable {
        case webView, platform, secondScreen
        /// A web-view device whose engine asks a direct subscription and the programmer's service
        /// (with a PIN step-up) before the TV provider.
        case chain
    }

    // MARK: - Scripts

    static let resources = ["news-channel", "sports-live", "movies-hd", "weather-now", ""]
    static let providers: [String?] = ["acme-cable", "bluesky-tv", "coastal-fiber", "nope", nil]
    static let operations: [BackendOperation] = [
        .configuration, .createSession, .profiles, .profile, .profileByCode, .partnerProfile, .authorize, .preauthorize,
        .logout,
    ]
    static let durations: [Duration] = [.seconds(1), .seconds(29), .seconds(31), .seconds(300), .seconds(660), .seconds(90_000)]

    static func device(seed: UInt64) -> Device {
        var random = FuzzRandom(seed: seed ^ 0xD5)
        return random.pick(Device.allCases)
    }

    /// The script for `seed`.
    package func steps(seed: UInt64) -> [ExplorerStep] {
        var random = FuzzRandom(seed: seed)
        let device = Self.device(seed: seed)
        var steps: [ExplorerStep] = [.call(.setRequestor(requestorID: "sim-requestor", serviceProviders: []))]
        while steps.count < length {
            steps.append(Self.step(&random, device: device))
        }
        return steps
    }

    static func step(_ random: inout FuzzRandom, device: Device) -> ExplorerStep {
        if device == .chain, random.chance(1, in: 4) { return chainStep(&random) }
        switch Int.random(in: 0..<100, using: &random) {
        case 0..<45: return .call(call(&random, device: device))
        case 45..<55: return .logIn(rightPassword: random.chance(4, in: 5), deliver: random.chance(4, in: 5))
        case 55..<58: return .cancelAtProvider
        case 58..<62: return .followLogout(deliver: random.chance(3, in: 4))
        case 62..<65: return .deliverKept
        case 65..<75: return .advanceClock(random.pick(durations))
        case 75..<81: return .fail(random.pick(operations), garbage: random.chance(1, in: 3))
        case 81..<85: return .hold(random.pick(operations))
        case 85..<90: return .release(random.pick(operations))
        case 90..<93: return .storageFails(random.chance(1, in: 2))
        case 93..<97:
            switch Int.random(in: 0..<4, using: &random) {
            case 0: return .onOtherNode(.call(.setRequestor(requestorID: "sim-requestor", serviceProviders: [])))
            case 1: return .onOtherNode(.call(random.pick([EntitlementCall.logout, .checkAuthentication, .getAuthorization(resource: "news-channel", data: [:])])))
            case 2 where device == .chain: return .onOtherNode(chainStep(&random))
            case 2: return .onOtherNode(.call(.setSelectedProvider("acme-cable")))
            default: return .onOtherNode(random.chance(1, in: 2) ? .logIn(rightPassword: true, deliver: true) : .followLogout(deliver: true))
            }
        default:
            switch device {
            case .webView, .chain: return .call(call(&random, device: device))
            case .secondScreen: return .activateSecondScreen
            case .platform:
                let choices: [SimulatedPlatform.Choice] = [
                    .signIn(username: "alice"), .signIn(username: "carol"), .choose(mvpdID: "coastal-fiber"),
                    .otherProviders, .cancel,
                ]
                return .platformAnswers(random.pick(choices))
            }
        }
    }

    static func call(_ random: inout FuzzRandom, device: Device) -> EntitlementCall {
        let resources = device == .chain ? Self.chainResources : Self.resources
        switch Int.random(in: 0..<13, using: &random) {
        case 0: return .setRequestor(requestorID: random.pick(["sim-requestor", "sim-news", "unknown", ""]), serviceProviders: [])
        case 1: return .checkAuthentication
        case 2: return .getAuthentication(forceAuthn: random.chance(1, in: 5), data: [:])
        case 3, 4: return .setSelectedProvider(random.pick(providers))
        case 5: return .handleExternalURL(random.pick(["adobepass://ios.app?code=forged&state=forged", "garbage", "adobepass://ios.app"]))
        case 6: return .getSelectedProvider
        case 7: return .checkAuthorization(resource: random.pick(resources), data: [:])
        case 8, 9: return .getAuthorization(resource: random.pick(resources), data: [:])
        case 10:
            let count = Int.random(in: 0...6, using: &random)
            return .checkPreauthorizedResources((0..<count).map { _ in random.pick(resources) }, cache: random.chance(1, in: 2))
        case 11:
            let keys: [MetadataKey] = [.authenticationExpiry, .authorizationExpiry(resource: "news-channel"), .deviceID, .userMetadata("zip")]
            return .getMetadata(random.pick(keys))
        default: return .logout
        }
    }

    // MARK: - Runs

    /// Plays the script for `seed` and checks every invariant; nil when all hold.
    package func explore(seed: UInt64) async -> Failure? {
        let steps = steps(seed: seed)
        let problems = await run(steps, seed: seed)
        return problems.isEmpty ? nil : Failure(seed: seed, steps: steps, problems: problems)
    }

    /// ``explore(seed:)``, then shortens the failing script: steps are dropped one at a time while
    /// the run still fails (at most `budget` replays).
    package func exploreAndShrink(seed: UInt64, budget: Int = 400) async -> Failure? {
        guard var failure = await explore(seed: seed) else { return nil }
        var replays = 0
        var index = failure.steps.count - 1
        while index > 0, replays < budget {
            var shorter = failure.steps
            shorter.remove(at: index)
            replays += 1
            let problems = await run(shorter, seed: seed)
            if !problems.isEmpty {
                failure.steps = shorter
                failure.problems = problems
            }
            index = min(index - 1, failure.steps.count - 1)
        }
        return failure
    }

    /// Plays `steps` on a fresh engine and returns every broken invariant.
    package func run(_ steps: [ExplorerStep], seed: UInt64) async -> [String] { await play(steps, seed: seed).problems }

    /// The trace of the engine under test playing `steps` (its calls, callbacks and inputs; the other
    /// node's are not in it), then the explorer's closing check (a fresh login): to read a failure with
    /// `entitle trace show`.
    package func trace(of steps: [ExplorerStep], seed: UInt64) async -> Trace { await play(steps, seed: seed).trace }

    /// Plays `steps` on a fresh engine: every broken invariant, and the engine's trace.
    private func play(_ steps: [ExplorerStep], seed: UInt64) async -> (problems: [String], trace: Trace) {
        let device = Self.device(seed: seed)
        var settings = EngineSettings.simulated
        if device == .secondScreen { settings.secondScreen = SecondScreen() }
        if device == .chain { settings.stepUp = StepUpSettings(resources: Self.stepUpResources) }
        let storage = ScriptedTokenStorage()
        let recorder = TraceRecorder(recordedWith: "entitle explore")
        let observer = StepObserver()
        let clock = ManualClock()
        let simulator = Simulator(world: device == .chain ? Self.chainWorld : .default, clock: clock, seed: seed &+ 100)
        let chain = device == .chain ? Self.chain(on: simulator) : nil
        let session = SimulatedSession(
            seed: seed, settings: settings, storage: storage, clock: clock, simulator: simulator, deliversInOrder: true,
            recorder: recorder, echo: { observer.observe($0) }, platformSSO: device == .platform, providers: chain)
        // The other node shares the device's storage, backend and clock; it answers at once.
        let other = SimulatedSession(
            seed: seed &+ 1_000_003, settings: settings, storage: storage, clock: clock, simulator: simulator, providers: chain)
        await other.enabler.setRequestor("sim-requestor")
        var problems: [String] = []
        var kept: [String] = []
        for step in steps {
            if case .onOtherNode(let step) = step {
                await perform(step, on: other, storage: storage, kept: &kept, problems: &problems)
            } else {
                await perform(step, on: session, storage: storage, kept: &kept, problems: &problems)
            }
            await other.settle()
            await session.settle()
        }
        // The end: every fault heals, every held answer arrives, every deadline passes.
        storage.failSaves(false)
        for operation in BackendOperation.allCases {
            await session.simulator.heal(operation)
            await session.stepped?.release(operation)
        }
        for id in Self.chainProviderIDs {
            await session.simulator.healProgrammer(id)
            await session.steppedProviders?.releaseHeld(id)
        }
        for _ in 0..<3 {
            for node in [session, other] {
                await node.settle()
                // The provider picker has no deadline: it waits for the app, which closes it here.
                if case .login(_, .selectingProvider) = await node.enabler.machineSnapshot.authentication {
                    await node.enabler.setSelectedProvider(nil)
                    await node.settle()
                }
            }
            await session.clock.advance(by: .seconds(700))
        }
        for node in [session, other] {
            await node.settle()
            _ = node.ledger.take()
            problems += node.ledger.violations()
        }
        await session.clock.advance(by: .seconds(90_000))
        await session.settle()
        await other.settle()
        let late = session.ledger.take() + other.ledger.take()
        if !late.isEmpty { problems.append("callbacks after everything ended: \(late.map(\.redactedDescription))") }
        problems += observer.refusalsThatChangedSomething
        problems += await freshLoginProblems(session, device: device)
        let trace = recorder.trace
        if let divergence = TraceReplayer().replay(trace).divergence {
            problems.append("the trace does not replay: \(divergence.description.prefix(600))")
        }
        return (problems, trace)
    }

    private func perform(
        _ step: ExplorerStep, on session: SimulatedSession, storage: ScriptedTokenStorage, kept: inout [String],
        problems: inout [String]
    ) async {
        switch step {
        case .call(let call):
            await session.enabler.call(call)
        case .logIn(let right, let deliver):
            guard let url = session.lastNavigation else { return }
            let visit = await session.userAgent.logIn(at: url, username: "alice", password: right ? "wonderland" : "wrong")
            await arrive(visit, deliver: deliver, session, &kept)
        case .cancelAtProvider:
            guard let url = session.lastNavigation else { return }
            await arrive(await session.userAgent.cancelLogin(at: url), deliver: true, session, &kept)
        case .followLogout(let deliver):
            guard let url = session.lastNavigation else { return }
            await arrive(await session.userAgent.follow(url), deliver: deliver, session, &kept)
        case .deliverKept:
            guard !kept.isEmpty else { return }
            await session.enabler.handleExternalURL(kept.removeFirst())
        case .activateSecondScreen:
            await activateSecondScreen(on: session)
        case .advanceClock(let duration):
            await session.clock.advance(by: duration)
        case .fail(let operation, let garbage):
            await session.simulator.inject(garbage ? .answerGarbage : .fail(.httpStatus(503, "unavailable")), into: operation)
        case .hold(let operation):
            await session.stepped?.hold(operation)
        case .release(let operation):
            await session.stepped?.release(operation)
        case .storageFails(let failing):
            storage.failSaves(failing)
        case .platformAnswers(let choice):
            session.platform?.script(choice)
        case .subscriptionLapses(let lapsed):
            await session.simulator.setSubscription(of: "ann", lapsed: lapsed)
        case .subscriptionForgetsTokens:
            await session.simulator.invalidateSubscriptionTokens("magazine")
        case .serviceFails(let id, let fault):
            await session.simulator.failProgrammer(id, with: fault)
        case .userConfirmsStepUp(let right):
            await session.simulator.confirmTransaction(pin: right ? "4321" : "0000")
        case .providerHolds(let id, let holds):
            if holds { await session.steppedProviders?.hold(id) } else { await session.steppedProviders?.releaseHeld(id) }
        case .storeFails(let question, let failure):
            session.simulator.chainProviders.first { $0.id == "store" }?.fail(question, with: failure)
        case .storeGrants(let resources):
            session.simulator.chainProviders.first { $0.id == "store" }?.grant(Set(resources))
        case .onOtherNode(let step):
            await perform(step, on: session, storage: storage, kept: &kept, problems: &problems)
        }
    }

    private func arrive(_ visit: SimulatedUserAgent.Visit, deliver: Bool, _ session: SimulatedSession, _ kept: inout [String]) async {
        guard let url = visit.appURL else { return }
        if deliver { await session.enabler.handleExternalURL(url) } else { kept.append(url) }
    }

    /// Whatever the run left behind, the engine configures and a full login succeeds.
    private func freshLoginProblems(_ session: SimulatedSession, device: Device) async -> [String] {
        session.platform?.clearScript()
        session.platform?.script(.otherProviders)
        await session.enabler.setRequestor("sim-requestor")
        await session.settle()
        _ = session.ledger.take()
        let login = await session.enabler.getAuthentication(forceAuthn: true)
        await session.settle()
        // Whether a picker is up or a remembered provider's page is open, choose Acme (alice's MVPD).
        await session.enabler.setSelectedProvider("acme-cable")
        await session.settle()
        if device == .secondScreen {
            await activateSecondScreen(on: session)
            await session.clock.advance(by: .seconds(5))
            await session.settle()
        } else if let url = session.lastNavigation {
            let visit = await session.userAgent.logIn(at: url, username: "alice", password: "wonderland")
            if let back = visit.appURL { await session.enabler.handleExternalURL(back) }
            await session.settle()
        }
        let answers = session.ledger.answers(to: login)
        let callbacks = session.ledger.take()
        guard answers == [.setAuthenticationStatus(status: 1, errorCode: "")] else {
            return [
                "a fresh login afterwards did not succeed: \(answers.map(\.redactedDescription)) after "
                    + callbacks.map(\.redactedDescription).joined(separator: ", ")
            ]
        }
        return []
    }

    /// The second-screen user enters the last registration code the engine showed, as alice.
    private func activateSecondScreen(on session: SimulatedSession) async {
        let code = session.ledger.callbacks.reversed().lazy.compactMap { callback -> String? in
            if case .status(let report) = callback, report.code == "REGCODE" { return report.message }
            return nil
        }.first
        if let code { _ = await session.userAgent.activate(code: code, username: "alice", password: "wonderland") }
    }
}
