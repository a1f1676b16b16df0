import EntitlementEngine
import EntitlementTestSupport
@testable import EntitlementFuzzing
import Testing

/// The fleet model check (`entitle check`) at small bounds in every `swift test`; `.ci/run` runs it
/// deeper, and its long mode is by hand (the DocC article *Running a fleet* gives its command and figures).
/// One search at a time (each takes a core for seconds): the suite's other tests keep the rest of the machine.
@Suite("Fleet model check", .serialized, .backgroundThread)
struct FleetCheckerTests {
    /// Runs a check where the test runs: on a thread of its own at the lowest priority (`.backgroundThread`),
    /// one search at a time.
    static func run(_ checker: FleetChecker) async -> FleetChecker.Report {
        checker.run()
    }

    /// Two nodes keep every promise in every interleaving of six events, a fault among them.
    @Test func everyInterleavingOfSixEventsKeepsEveryPromise() async {
        let report = await Self.run(FleetChecker(bounds: .init(nodes: 2, depth: 6, calls: 3, userActions: 2, faults: 1)))
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        expectEqual(report.depth, 6)
        // Every level was reached and grew: the check explored, it did not stop early.
        expectEqual(report.statesByDepth.count, 7)
        #expect(zip(report.statesByDepth, report.statesByDepth.dropFirst()).allSatisfy { $0.0 < $0.1 }, "\(report.statesByDepth)")
        #expect(report.states == report.statesByDepth.reduce(0, +) && report.states > 40_000, "\(report.states)")
    }

    /// A TV with a second screen: two nodes keep every promise in every interleaving of five events (`.ci/run`
    /// checks eight).
    @Test func aSecondScreenKeepsEveryPromiseToFiveEvents() async {
        let report = await Self.run(FleetChecker(bounds: .init(nodes: 2, depth: 5, secondScreen: true)))
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 5 && report.states > 2_000, "\(report.statesByDepth)")
    }

    /// The interleavings the check found against 0.9.2, played again: each now keeps every promise, and
    /// the script shows how.
    @Test func theInterleavingsFoundAgainst092KeepEveryPromise() {
        let checker = FleetChecker(bounds: .init(nodes: 2, depth: 8, calls: 3, userActions: 2, faults: 1))
        let completing: [FleetEvent] = [
            .call(node: 0, .chooseProvider), .answer(node: 0, OperationID(2, owner: nil)), .logIn(page: 0), .redirect(0, node: 0),
        ]
        // The device cancels through b while main reads the login's profile: main ends the login unsigned.
        let cancelled = checker.replay(completing + [.call(node: 1, .cancel)])
        #expect(cancelled.problems.isEmpty, "\(cancelled)")
        #expect(cancelled.script.contains("< @b setAuthenticationStatus(0, \"PROVIDER_NOT_SELECTED_ERROR\")"), "\(cancelled.script)")
        // The store is down when the device logs out through b: b cannot read it, so it refuses the call
        // (a passing failure, typed) instead of answering from a view the store has moved past.
        let unread = checker.replay(completing + [.storeDown, .call(node: 1, .logout)])
        #expect(unread.problems.isEmpty, "\(unread)")
        #expect(unread.script.last?.hasPrefix("< @b status(") == true && unread.script.last?.contains("STORAGE_UNAVAILABLE") == true, "\(unread.script)")
    }

    /// With step-ups (a PIN-protected resource and a plain grant through a provider, the app's reports and
    /// logouts on any node), two nodes keep every promise in every interleaving of seven events (`.ci/run`
    /// checks ten, and three nodes).
    @Test func stepUpsKeepEveryPromiseToSevenEvents() async {
        let report = await Self.run(FleetChecker(bounds: .init(nodes: 2, depth: 7, stepUp: true)))
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 7 && report.states > 30_000, "\(report.statesByDepth)")
    }

    /// The interleavings the step-up check found while step-ups moved into the store, played again: each
    /// now keeps every promise once everything settles.
    @Test(arguments: [
        // A logout through b at the step-up's deadline, before main's timer fired; then main's late report.
        [FleetEvent.call(node: 0, .authorize), .answer(node: 0, OperationID(3, owner: nil)), .advanceClock, .call(node: 1, .logout), .call(node: 0, .completeStepUp)],
        // b completes main's step-up and asks for a new one before main looks: main must not present its used transaction.
        [.call(node: 0, .authorize), .answer(node: 0, OperationID(3, owner: nil)), .call(node: 1, .completeStepUp), .answer(node: 1, OperationID(4, owner: nil)),
         .call(node: 1, .authorize), .answer(node: 1, OperationID(5, owner: nil)), .call(node: 0, .completeStepUp)],
        // A logout through b, then b's new step-up replaces the ended one, past main's deadline.
        [.call(node: 0, .authorize), .answer(node: 0, OperationID(3, owner: nil)), .call(node: 1, .logout), .advanceClock, .call(node: 1, .authorize),
         .advanceClock, .call(node: 0, .completeStepUp)],
        // b takes main's step-up over while its own request is out, and main logs out.
        [.call(node: 0, .authorize), .call(node: 1, .authorize), .answer(node: 0, OperationID(3, owner: nil)), .call(node: 1, .completeStepUp),
         .answer(node: 1, OperationID(3, owner: nil)), .call(node: 0, .logout)],
        // Both nodes ask; main completes its step-up; b's advice comes while main's retry is out.
        [.call(node: 0, .authorize), .call(node: 1, .authorize), .answer(node: 0, OperationID(3, owner: nil)), .call(node: 0, .completeStepUp),
         .answer(node: 1, OperationID(3, owner: nil)), .call(node: 1, .completeStepUp)],
    ])
    func theStepUpInterleavingsFoundKeepEveryPromise(events: [FleetEvent]) {
        let played = FleetChecker(bounds: .init(nodes: 2, depth: 8, calls: 4, faults: 2, stepUp: true)).replay(events)
        #expect(played.problems.isEmpty, "\(played.problems)\n\(played.script.joined(separator: "\n"))")
    }

    /// The interleavings the plain server authorization found: a logout through b while main's request is
    /// out — main ends the request when it reads the mark; with the store down when the grant comes, main
    /// cannot read the mark and so hands nothing out (`STORAGE_UNAVAILABLE`), as it would not hand out
    /// the TV provider's decision.
    @Test(arguments: [false, true])
    func aGrantAskedBeforeALogoutElsewhereIsNotHandedOut(storeDown: Bool) {
        let events: [FleetEvent] =
            [.call(node: 0, .authorizeOpen), .call(node: 1, .logout)] + (storeDown ? [.storeDown] : []) + [.answer(node: 0, OperationID(3, owner: nil))]
        let played = FleetChecker(bounds: .init(nodes: 2, depth: 8, calls: 4, faults: 2, stepUp: true)).replay(events)
        #expect(played.problems.isEmpty, "\(played.problems)\n\(played.script.joined(separator: "\n"))")
        let ended = storeDown ? "STORAGE_UNAVAILABLE" : "USER_NOT_AUTHENTICATED_ERROR"
        #expect(played.script.contains { $0.hasPrefix("< @main tokenRequestFailed") && $0.contains(ended) }, "\(played.script)")
    }

    /// With the store losing an acknowledged write among the faults, every promise that does not rest on the
    /// lost write still holds (answered once, listed rows, no status for calls a node does not hold, none
    /// left waiting, every node agreeing with the store); the interleaving that found a row the table
    /// lacked — the store forgets main's `completing` mark, b completes the step-up too, and main's retry
    /// meets b's outcome — plays again.
    @Test func lostWritesKeepEveryPromiseThatDoesNotRestOnThem() async {
        let report = await Self.run(FleetChecker(bounds: .init(nodes: 2, depth: 5, lostWrites: true)))
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        let found: [FleetEvent] = [
            .call(node: 0, .authorize), .answer(node: 0, OperationID(3, owner: nil)), .call(node: 0, .completeStepUp), .advanceClock,
            .storeLosesLastWrite, .call(node: 1, .completeStepUp), .answer(node: 1, OperationID(4, owner: nil)),
        ]
        let played = FleetChecker(bounds: .init(nodes: 2, depth: 8, stepUp: true, lostWrites: true)).replay(found)
        #expect(played.problems.isEmpty, "\(played.problems)\n\(played.script.joined(separator: "\n"))")
        #expect(played.script.contains("! storage loses the last write"), "\(played.script)")
    }

    /// A direct subscription (sign-in, reading an issue, sign-out and logout on any node; the service
    /// forgetting its tokens): two nodes keep every promise to six events — each token renewed once for
    /// the fleet, no sign-in reported that the store never held (`.ci/run` checks eight).
    @Test func aSubscriptionKeepsEveryPromiseToSixEvents() async {
        let report = await Self.run(FleetChecker(bounds: .init(nodes: 2, depth: 6, subscription: true)))
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 6 && report.states > 20_000, "\(report.statesByDepth)")
    }

    /// With the platform's TV-provider account (its picker on any node, the silent sign-in at every node's
    /// `setRequestor`), two nodes keep every promise in every interleaving of five events (`.ci/run` checks
    /// eight, and three nodes to six); the picker's sign-in is among the events searched.
    @Test func aPlatformAccountKeepsEveryPromiseToFiveEvents() async {
        let checker = FleetChecker(bounds: .init(nodes: 2, depth: 5, platform: true))
        let report = await Self.run(checker)
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 5 && report.states > 10_000, "\(report.statesByDepth)")
        let signedIn = checker.replay([
            .call(node: 0, .getAuthentication), .answer(node: 0, OperationID(2, owner: nil)), .answer(node: 0, OperationID(4, owner: nil)),
            .platformPicker(node: 0, .signIn), .answer(node: 0, OperationID(5, owner: nil)),
        ])
        #expect(signedIn.problems.isEmpty, "\(signedIn)")
        #expect(signedIn.script.contains("< @main setAuthenticationStatus(1, \"\")"), "\(signedIn.script)")
    }

    /// With the TV provider's authorization among the calls (cookbook F: a resource asked while signed out
    /// starts the login, and the decision follows it), two nodes keep every promise in every interleaving of
    /// four events (`.ci/run` checks eight, and three nodes to six).
    @Test func theTVProvidersAuthorizationKeepsEveryPromiseToFourEvents() async {
        let checker = FleetChecker(bounds: .init(nodes: 2, depth: 4, authorize: true))
        let report = await Self.run(checker)
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 4 && report.states > 3_000, "\(report.statesByDepth)")
        let watched = checker.replay([
            .call(node: 0, .watch), .call(node: 0, .chooseProvider), .answer(node: 0, OperationID(2, owner: nil)), .logIn(page: 0),
            .redirect(0, node: 0), .answer(node: 0, OperationID(3, owner: nil)), .answer(node: 0, OperationID(4, owner: nil)),
        ])
        #expect(watched.problems.isEmpty, "\(watched)")
        #expect(watched.script.contains { $0.hasPrefix("< @main setToken(") }, "\(watched.script.joined(separator: "\n"))")
    }

    /// With answers that travel apart from the service's acting (`--late-answers`), two nodes keep every
    /// promise in every interleaving of four events; played through, a decision the service made while the
    /// device was signed in, reaching main after a logout through b, is not handed out.
    @Test func lateAnswersKeepEveryPromiseToFourEvents() async {
        let checker = FleetChecker(bounds: .init(nodes: 2, depth: 4, authorize: true, lateAnswers: true))
        let report = await Self.run(checker)
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 4 && report.states > 3_000, "\(report.statesByDepth)")
        let signedIn: [FleetEvent] = [
            .call(node: 0, .chooseProvider), .answer(node: 0, OperationID(2, owner: nil)), .arrive(node: 0, OperationID(2, owner: nil)),
            .logIn(page: 0), .redirect(0, node: 0), .answer(node: 0, OperationID(3, owner: nil)), .arrive(node: 0, OperationID(3, owner: nil)),
        ]
        let checking = FleetChecker(bounds: .init(nodes: 2, depth: 12, calls: 4, authorize: true, lateAnswers: true))
        let decidedBefore = checking.replay(
            signedIn + [.call(node: 0, .watch), .answer(node: 0, OperationID(4, owner: nil)), .call(node: 1, .logout), .arrive(node: 0, OperationID(4, owner: nil))])
        #expect(decidedBefore.problems.isEmpty, "\(decidedBefore)")
        let script = decidedBefore.script.joined(separator: "\n")
        #expect(!decidedBefore.script.contains { $0.hasPrefix("< @main setToken(") }, "\(script)")
        #expect(decidedBefore.script.contains { $0.hasPrefix("< @main tokenRequestFailed(") }, "\(script)")
        // Without the logout, the same decision reaching main is handed out.
        let decided = checking.replay(signedIn + [.call(node: 0, .watch), .answer(node: 0, OperationID(4, owner: nil)), .arrive(node: 0, OperationID(4, owner: nil))])
        #expect(decided.problems.isEmpty && decided.script.contains { $0.hasPrefix("< @main setToken(") }, "\(decided.script.joined(separator: "\n"))")
    }

    /// Late answers carry a provider's answers too: two nodes with a subscription keep every promise in
    /// every interleaving of five events; played through, a sign-in the provider made whose answer is lost
    /// fails on main with the network's code, and one whose answer reaches main after a logout through b
    /// (the TV provider's: the subscription is an account of its own) signs main in once verified.
    @Test func lateProviderAnswersKeepEveryPromiseToFiveEvents() async {
        let report = await Self.run(FleetChecker(bounds: .init(nodes: 2, depth: 5, subscription: true, lateAnswers: true)))
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 5 && report.states > 12_000, "\(report.statesByDepth)")
        let checking = FleetChecker(bounds: .init(nodes: 2, depth: 10, calls: 4, subscription: true, lateAnswers: true))
        let signIn: [FleetEvent] = [.call(node: 0, .signIn), .answer(node: 0, OperationID(2, owner: nil))]
        let lost = checking.replay(signIn + [.fail(node: 0, OperationID(2, owner: nil))])
        #expect(lost.problems.isEmpty, "\(lost)")
        #expect(
            lost.script.contains("< @main providerSignInStatus(\"mag\", 0, \"PROVIDER_NETWORK_FAILURE\", \"We were unable to connect to the network.\")"),
            "\(lost.script.joined(separator: "\n"))")
        let arrived = checking.replay(
            signIn + [.call(node: 1, .logout), .arrive(node: 0, OperationID(2, owner: nil)), .answer(node: 0, OperationID(3, owner: nil)),
                      .arrive(node: 0, OperationID(3, owner: nil))])
        #expect(arrived.problems.isEmpty, "\(arrived)")
        let script = arrived.script.joined(separator: "\n")
        #expect(arrived.script.contains("! backend's answer to @main request op#2 arrives"), "\(script)")
        #expect(arrived.script.contains("< @main providerSignInStatus(\"mag\", 1, \"\", \"\")"), "\(script)")
    }

    /// With the channel's pre-authorization among the calls (the cache allowed), two nodes keep every
    /// promise in every interleaving of four events; played through, a signed-in device's pre-authorization
    /// lists the channel, and after a logout the same call answers nothing, from the cache or not.
    @Test func preauthorizationKeepsEveryPromiseToFourEvents() async {
        let checker = FleetChecker(bounds: .init(nodes: 2, depth: 4, preauthorize: true))
        let report = await Self.run(checker)
        #expect(report.counterexample == nil, "\(report.counterexample.map(\.description) ?? "")")
        #expect(report.depth == 4 && report.states > 3_000, "\(report.statesByDepth)")
        let previewed = FleetChecker(bounds: .init(nodes: 2, depth: 9, calls: 4, preauthorize: true)).replay([
            .call(node: 0, .chooseProvider), .answer(node: 0, OperationID(2, owner: nil)), .logIn(page: 0), .redirect(0, node: 0),
            .answer(node: 0, OperationID(3, owner: nil)), .call(node: 0, .preview), .answer(node: 0, OperationID(4, owner: nil)),
            .call(node: 1, .logout), .call(node: 0, .preview),
        ])
        #expect(previewed.problems.isEmpty, "\(previewed)")
        let answers = previewed.script.filter { $0.contains("preauthorizedResources(") }
        expectEqual(answers, ["< @main preauthorizedResources([\"sports\"])", "< @main preauthorizedResources([])"], "\(previewed.script.joined(separator: "\n"))")
    }

    /// The interleavings the subscription check found, played again: each keeps every promise now.
    @Test(arguments: [
        // main signs in; the service forgets the token; b restarts, finds it invalid and renews it; main's
        // verification of the sign-in says invalid too: main answers the sign-in and waits for b's renewal.
        [FleetEvent.call(node: 0, .signIn), .answer(node: 0, OperationID(2, owner: nil)), .providerForgetsTokens, .restart(node: 1),
         .answer(node: 0, OperationID(3, owner: nil))],
        // main signs in; b, told of it, verifies the new token (and refuses a sign-in of its own meanwhile:
        // busy); the service forgets; with the store down, b's verification says invalid: b starts no
        // renewal the store cannot mark, and main, later, renews once.
        [.call(node: 0, .signIn), .answer(node: 0, OperationID(2, owner: nil)), .call(node: 1, .signIn),
         .providerForgetsTokens, .storeDown, .answer(node: 1, OperationID(2, owner: nil))],
        // main renews, and the store refuses the renewed token: a later renewal of the old one is not the
        // fleet renewing twice (no node could know of the first).
        [.call(node: 0, .signIn), .call(node: 0, .readIssue), .answer(node: 0, OperationID(2, owner: nil)), .providerForgetsTokens,
         .answer(node: 0, OperationID(4, owner: nil)), .storeDown, .answer(node: 0, OperationID(5, owner: nil))],
    ])
    func theSubscriptionInterleavingsFoundKeepEveryPromise(events: [FleetEvent]) {
        let played = FleetChecker(bounds: .init(nodes: 2, depth: 8, subscription: true)).replay(events)
        #expect(played.problems.isEmpty, "\(played.problems)\n\(played.script.joined(separator: "\n"))")
        #expect(played.script.contains("! provider mag forgets its tokens"), "\(played.script)")
    }

    /// Each promise the check holds is one it can see broken: a call answered twice, a sign-in after a
    /// logout with no login since, a call left waiting, nodes that disagree with the store, a login the
    /// user completed in time that leaves the device signed out, a node telling a status for no call it
    /// holds, a step-up asked that the store does not hold, a transaction presented twice, a media
    /// token granted after a logout handed out, and a grant asked for before a logout handed out after it.
    @Test func eachPromiseIsSeenBroken() {
        let bounds = FleetChecker.Bounds(nodes: 2, depth: 1)
        var twice = FleetModel(nodes: 2, bounds: bounds)
        twice.observe(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [CallID(1)], on: 1)
        #expect(twice.problems.count == 1 && twice.problems[0].contains("answered call #1 again"), "\(twice.problems)")

        var afterLogout = FleetModel(nodes: 2, bounds: bounds)
        afterLogout.apply(.call(node: 0, .logout))
        afterLogout.observe(.setAuthenticationStatus(status: 1, errorCode: ""), answering: [], on: 0)
        #expect(afterLogout.problems.contains { $0.contains("signed the device in after a logout or cancel") }, "\(afterLogout.problems)")

        // No session at the service: the code shown is dead (the activation page refuses it).
        var deadCode = FleetModel(nodes: 2, bounds: FleetChecker.Bounds(nodes: 2, depth: 1, secondScreen: true))
        deadCode.observe(.status(StatusReport(code: "REGCODE", level: .info, message: "C1")), answering: [], on: 0)
        #expect(deadCode.problems.contains { $0.contains("a registration code the user already entered") }, "\(deadCode.problems)")

        var waiting = FleetModel(nodes: 2, bounds: bounds)
        waiting.nodes[1].waiting.append(CallID(9))
        expectEqual(waiting.problemsOnceSettled()?.contains { $0.contains("leaves calls [#9] unanswered") }, true)

        var split = FleetModel(nodes: 2, bounds: bounds)
        split.store.tokens = StoredTokens(
            authentication: AuthenticationToken(
                mvpdID: FleetModel.mvpd.id, requestorID: FleetModel.requestorID, userID: "alice", expires: FleetModel.start.adding(.seconds(3600))),
            deviceID: FleetModel.deviceID)
        expectEqual(split.problemsOnceSettled()?.contains { $0.contains("answer checkAuthentication differently") }, true)

        let stepUps = FleetChecker.Bounds(nodes: 2, depth: 1, stepUp: true)
        var unheld = FleetModel(nodes: 2, bounds: stepUps)
        unheld.observe(.stepUpRequired(resource: "film", advice: StepUpAdvice(kind: .transaction, value: "v", transactionID: "T1")), answering: [], on: 0)
        #expect(unheld.problems.contains { $0.contains("a step-up the store does not hold") }, "\(unheld.problems)")

        var reused = FleetModel(nodes: 2, bounds: stepUps)
        _ = reused.providerAnswer(presenting: nil, on: 0)
        _ = reused.providerAnswer(presenting: "T1", on: 0)
        #expect(reused.problems.isEmpty)
        _ = reused.providerAnswer(presenting: "T1", on: 1)
        #expect(reused.problems.contains { $0.contains("presented transaction T1 a second time") }, "\(reused.problems)")

        var afterStepUpLogout = FleetModel(nodes: 2, bounds: stepUps)
        _ = afterStepUpLogout.providerAnswer(presenting: nil, on: 0)
        afterStepUpLogout.apply(.call(node: 1, .logout))
        _ = afterStepUpLogout.providerAnswer(presenting: "T1", on: 0)
        afterStepUpLogout.observe(.setToken(token: FleetModel.mediaTokenPrefix + "1", resource: "film"), answering: [], on: 0)
        #expect(afterStepUpLogout.problems.contains { $0.contains("granted after a logout") }, "\(afterStepUpLogout.problems)")

        var openAfterLogout = FleetModel(nodes: 2, bounds: stepUps)
        openAfterLogout.service.openAsked = 1
        openAfterLogout.apply(.call(node: 1, .logout))
        openAfterLogout.observe(.setToken(token: FleetModel.openTokenPrefix + "1", resource: FleetModel.openResource), answering: [], on: 0)
        #expect(openAfterLogout.problems.contains { $0.contains("asked for before a logout, after it") }, "\(openAfterLogout.problems)")

        var silent = FleetModel(nodes: 2, bounds: bounds)
        silent.observe(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [], on: 1)
        #expect(silent.problems.contains { $0.contains("a status answering no call while it holds none") }, "\(silent.problems)")

        var lost = FleetModel(nodes: 2, bounds: bounds)
        lost.lastLoginPage = 0
        lost.newestLoginRedirect = 0
        lost.newestLoginDelivered = true
        expectEqual(lost.problemsOnceSettled()?.contains { $0.contains("yet once everything settled the device is signed out") }, true)
    }

    /// Going on after the first broken promise explores every level and lists each kind of broken promise
    /// once, shortest first; the checker reports the states it reached at each depth.
    @Test func goingOnExploresEveryLevel() async {
        let report = await Self.run(FleetChecker(bounds: .init(nodes: 3, depth: 4, calls: 2, userActions: 1, faults: 1), keepsGoing: true))
        expectEqual(report.statesByDepth.count, 5, "\(report.statesByDepth)")
        let lengths = report.counterexamples.map(\.events.count)
        expectEqual(lengths, lengths.sorted(), "\(lengths)")
        #expect(report.counterexamples.isEmpty, "\(report.counterexamples.map(\.description))")
    }
}
