import EntitlementEngine
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
import Testing

@Suite("H. logout: local tokens first, then the service's logout, then (interactive) the MVPD's logout page", .checksExactlyOnce)
struct LogoutFlowTests {
    @Test func localTokensAreClearedBeforeTheLogoutURLAndTheRedirectCompletesIt() async throws {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.getAuthorization("news-channel")
        _ = await session.collect()
        let logout = await session.enabler.logout()
        try await expectEqual(session.storage.tokens(deviceID: "device-1", requestorID: "sim-requestor"), .empty)
        let url = try #require(await session.collect().lastNavigation)
        #expect(url.hasPrefix("https://login.acme-cable.sim/logout?"), "the service answered logout/interactive with the MVPD's page")
        await session.enabler.checkAuthentication()  // already logged out locally
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        let visit = await session.userAgent.follow(url)
        #expect(visit.hops.contains { $0.hasPrefix("https://login.acme-cable.sim/logout") }, "the MVPD's logout page is visited")
        let back = await session.enabler.handleExternalURL(try #require(visit.appURL))
        let done = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)
        expectEqual(session.ledger.takeIgnoringTracking(), [done])
        #expect(session.ledger.answers(to: logout) == [done] && session.ledger.answers(to: back) == [done])
        await session.expectClean()
    }

    @Test func theServerSessionIsGoneAfterLogout() async throws {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.logout()
        let visit = await session.userAgent.follow(try #require(await session.collect().lastNavigation))
        await session.enabler.handleExternalURL(try #require(visit.appURL))
        _ = session.ledger.take()
        let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-1")
        await #expect(throws: BackendError.self) {
            try await session.simulator.perform(.authorize(context, mvpd: "acme-cable", resource: "news-channel"))
        }
        await session.expectClean()
    }

    @Test func aForgedLogoutRedirectIsRefusedAndTheLogoutContinues() async throws {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.logout()
        let url = try #require(await session.collect().lastNavigation)
        await session.enabler.handleExternalURL("adobepass://ios.app?state=forged")
        expectEqual(statusCode(session.ledger.take().first), "REDIRECT_STATE_MISMATCH")
        await session.enabler.handleExternalURL(try #require(await session.userAgent.follow(url).appURL))
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.expectClean()
    }

    @Test func aSecondLogoutJoinsAndALoginCallEndsALogoutWaitingForItsRedirect() async throws {
        let session = SimulatedSession()
        await session.signIn()
        let first = await session.enabler.logout()
        let url = try #require(await session.collect().lastNavigation)
        let second = await session.enabler.logout()
        #expect(session.ledger.take().isEmpty, "the second logout joins")
        // The user moved on: the logout ends as done (both its calls answered), and the login starts.
        await session.enabler.getAuthentication()
        let ended = await session.collectIgnoringTracking()
        expectEqual(ended.first, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), "\(ended)")
        expectEqual(ended.dropFirst().map(\.name), ["displayProviderDialog"], "\(ended)")
        expectEqual(session.ledger.answers(to: first), session.ledger.answers(to: second))
        // The logout's late redirect finds nothing waiting.
        await session.enabler.handleExternalURL(try #require(await session.userAgent.follow(url).appURL))
        expectEqual(statusCode(session.ledger.take().first), "REDIRECT_NO_PENDING_FLOW")
        await session.enabler.setSelectedProvider(nil)
        _ = session.ledger.take()
        await session.expectClean()
    }

    @Test func anUnfinishedLogoutCompletesAtItsDeadline() async {
        let session = SimulatedSession()
        await session.signIn()
        let logout = await session.enabler.logout()
        _ = await session.collect()
        await session.clock.advance(by: .seconds(600))
        let callbacks = session.ledger.takeIgnoringTracking()
        expectEqual(statusCode(callbacks.first), "LOGOUT_TIMED_OUT")
        expectEqual(session.ledger.answers(to: logout), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.expectClean()
    }

    @Test func cancellingDuringLogoutEndsTheLogout() async {
        let session = SimulatedSession()
        await session.signIn()
        let logout = await session.enabler.logout()
        _ = await session.collect()
        let cancel = await session.enabler.setSelectedProvider(nil)
        let done = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)
        expectEqual(session.ledger.takeIgnoringTracking(), [done])
        #expect(session.ledger.answers(to: logout) == [done] && session.ledger.answers(to: cancel) == [done])
        await session.expectClean()
    }

    /// The login's session exists, so its MVPD is logged out on the service too; nobody logged in
    /// there yet (`invalid`), so the logout completes at once, and the login's redirect finds no flow.
    @Test func logoutDuringALoginEndsTheLoginFirst() async {
        let session = SimulatedSession()
        let login = await session.startLogin()
        await session.enabler.logout()
        let done = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)
        await expectEqual(session.collectIgnoringTracking(), [done, done])
        expectEqual(session.ledger.backendRequests.last, .logout)
        await session.enabler.handleExternalURL(await session.redirectURL(from: login))
        expectEqual(statusCode(await session.collect().first), "REDIRECT_NO_PENDING_FLOW", "the login's state died with it")
        await session.expectClean()
    }
}

@Suite("Late results and re-entrant delegates", .checksExactlyOnce)
struct LateAndReentrantEventTests {
    @Test func aProfileReadThatFinishesAfterCancelIsIgnored() async {
        let session = SimulatedSession()
        let login = await session.startLogin()
        await session.simulator.hold(.profileByCode)
        await session.enabler.handleExternalURL(await session.redirectURL(from: login))
        await session.simulator.whenWaiting(.profileByCode)
        await session.enabler.setSelectedProvider(nil)
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected)])
        await session.simulator.releaseAll(.profileByCode)
        #expect(await session.collect().isEmpty)
        #expect(session.ledger.logs.contains { if case .lateResultIgnored = $0 { true } else { false } })
        await session.enabler.checkAuthentication()
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.expectClean()
    }

    @Test func anAuthorizationThatFinishesAfterLogoutIsIgnored() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.hold(.authorize)
        let get = await session.enabler.getAuthorization("news-channel")
        await session.simulator.whenWaiting(.authorize)
        await session.enabler.logout()
        let callbacks = session.ledger.takeIgnoringTracking()
        expectEqual(callbacks.first, .tokenRequestFailed(resource: "news-channel", errorCode: ErrorCode.userNotAuthenticated, errorDescription: "The user logged out."))
        await session.simulator.releaseAll(.authorize)
        await expectEqual(session.collect().map(\.name), ["navigateToUrl"], "the logout's page only: the late decision is ignored")
        expectEqual(session.ledger.answers(to: get).count, 1)
        await session.expectClean(pending: [CallID(6)])
    }

    @Test func lateResultsAreVisibleInTheDebugLog() async {
        let lines = Mutex<[String]>([])
        let clock = ManualClock()
        let simulator = Simulator(clock: clock)
        await simulator.hold(.configuration)
        let enabler = AccessEnabler(
            backend: simulator.backend, environment: .deterministic(clock: clock), settings: .simulated,
            monitor: MonitorGroup([DebugLog { line in lines.withLock { $0.append(line) } }]))
        await enabler.setRequestor("sim-requestor")
        await enabler.setRequestor("sim-news")
        await simulator.whenWaiting(.configuration, count: 2)
        await simulator.releaseAll(.configuration)
        await enabler.whenIdle()
        let log = lines.withLock { $0 }
        #expect(log.contains("· late backend result for op#1 ignored"), "\(log)")
        #expect(log.contains("< setRequestorComplete(SUCCESS)  answers #1,#2"))
    }

    @Test func aLateTimerIsIgnored() async {
        var machine = EntitlementMachine(deviceID: "d")
        expectEqual(machine.handle(.timerFired(.redirectDeadline(FlowID(9))), at: Timestamp(milliseconds: 0)).effects.apartFromDeadlines, [.log(.lateTimerIgnored(.redirectDeadline(FlowID(9))))])
        expectEqual(machine.handle(.backendAnswered(OperationID(4, owner: .authorization), .decisions([])), at: Timestamp(milliseconds: 0)).effects.apartFromDeadlines, [.log(.lateResultIgnored(OperationID(4, owner: .authorization)))])
    }

    /// Calls the engine from inside a callback, while the engine is still running the step that
    /// emitted it: the most re-entrant thing a delegate can do.
    final class ReentrantDelegate: AccessEnablerDelegate {
        let enabler = Mutex<AccessEnabler?>(nil)
        let call = Mutex<Task<CallID, Never>?>(nil)
        func displayProviderDialog(_ mvpds: [MVPD]) {
            guard let enabler = enabler.withLock({ $0 }) else { return }
            call.withLock { $0 = Task { await enabler.setSelectedProvider("acme-cable") } }
        }
    }

    @Test func aDelegateCallingTheEngineFromACallbackIsQueuedNotReentered() async {
        let delegate = ReentrantDelegate()
        let session = SimulatedSession(delegate: delegate)
        delegate.enabler.withLock { $0 = session.enabler }
        await session.simulator.hold(.configuration)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthentication()
        await session.enabler.getSelectedProvider()
        await session.simulator.releaseAll(.configuration)
        await session.enabler.whenIdle()
        _ = await delegate.call.withLock({ $0 })?.value
        let callbacks = await session.collectIgnoringTracking()
        // The re-entrant setSelectedProvider runs after the whole step that emitted the dialog:
        // the queued getSelectedProvider still sees no provider.
        expectEqual(callbacks.map(\.name), ["setRequestorComplete", "displayProviderDialog", "selectedProvider", "navigateToUrl"])
        expectEqual(callbacks[2], .selectedProvider(nil))
        await session.expectClean(pending: [CallID(2), CallID(4)])
    }
}

@Suite("The delegate protocol and the callback stream", .checksExactlyOnce)
struct DelegateAndStreamTests {
    final class Recorder: AccessEnablerDelegate {
        let received = Mutex<[String]>([])
        func setRequestorComplete(_ success: Bool) { received.withLock { $0.append("setRequestorComplete(\(success))") } }
        func setAuthenticationStatus(_ status: Int, errorCode: String) {
            received.withLock { $0.append("setAuthenticationStatus(\(status), \(errorCode))") }
        }
    }

    final class Silent: AccessEnablerDelegate {}

    @Test func theDelegateGetsCallbacksInOrderAndUnimplementedOnesAreNoOps() async {
        let recorder = Recorder()
        let session = SimulatedSession(delegate: recorder)
        await session.configure()
        await session.enabler.checkAuthentication()
        expectEqual(recorder.received.withLock { $0 }, ["setRequestorComplete(true)", "setAuthenticationStatus(0, USER_NOT_AUTHENTICATED_ERROR)"])
        _ = session.ledger.take()
        Silent().deliver(.displayProviderDialog([]))  // default implementations exist for all thirteen
        await session.expectClean()
    }

    @Test func everyStreamYieldsEveryCallbackFromItsCreationInOrder() async {
        let session = SimulatedSession()
        let early = await session.enabler.callbacks()
        await session.configure()
        let late = await session.enabler.callbacks()
        await session.enabler.checkAuthentication()
        var streamed: [Callback] = []
        var iterator = early.makeAsyncIterator()
        for _ in 0..<3 { if let next = await iterator.next() { streamed.append(next) } }
        expectEqual(streamed, session.ledger.callbacks)
        var lateIterator = late.makeAsyncIterator()
        await expectEqual(lateIterator.next(), session.ledger.callbacks[1], "a later stream starts from its creation")
        _ = session.ledger.take()
        await session.expectClean()
    }

    @Test func aStreamEndsWhenTheEngineIsReleased() async {
        var enabler: AccessEnabler? = AccessEnabler(
            backend: Simulator(clock: ManualClock()).backend, environment: .deterministic(clock: ManualClock()), settings: .simulated)
        let stream = await enabler!.callbacks()
        enabler = nil
        var iterator = stream.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func unknownOptionsAreRefusedAndChangeNothing() async throws {
        let session = SimulatedSession()
        await #expect(throws: AccessEnabler.OptionsError.unknownKeys(["colour"])) {
            try await session.enabler.setOptions(["visitorID": "v1", "colour": "blue"])
        }
        #expect(await session.enabler.machineSnapshot.options.isEmpty)
        try await session.enabler.setOptions(["visitorID": "v1"])
        await expectEqual(session.enabler.machineSnapshot.options, ["visitorID": "v1"])
    }
}
