import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

@Suite("B. Startup: calls are queued until setRequestor completes", .checksExactlyOnce)
struct StartupFlowTests {
    @Test func callsMadeBeforeSetRequestorCompletesRunAfterItInOrder() async {
        let session = SimulatedSession()
        await session.simulator.hold(.configuration)
        let early = await session.enabler.getSelectedProvider()  // before setRequestor is even called
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.checkAuthentication()
        await session.enabler.getMetadata(.deviceID)
        await session.enabler.checkAuthorization("news-channel")
        await session.enabler.getAuthentication()
        #expect(session.ledger.take().isEmpty, "nothing may run before the configuration arrives")
        await expectEqual(session.enabler.machineSnapshot.queue.count, 5)
        expectEqual(early, CallID(1))

        await session.simulator.releaseAll(.configuration)
        expectCallbacks(
            await session.collectIgnoringTracking(),
            [
                .setRequestorComplete(success: true),
                .selectedProvider(nil),
                .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated),
                .setMetadataStatus(.text("device-1"), encrypted: false, key: .deviceID),
                .tokenRequestFailed(
                    resource: "news-channel", errorCode: ErrorCode.userNotAuthenticated,
                    errorDescription: "The user is not authenticated."),
                .displayProviderDialog(SimulatedWorld.default.providers.map(\.mvpd)),
            ])
        await session.expectClean(pending: [CallID(6)])  // getAuthentication waits for the user
    }

    @Test func failedConfigurationFailsEveryHeldCallWithItsOwnCallback() async {
        let session = SimulatedSession()
        await session.enabler.setRequestor("no-such-requestor")
        await session.enabler.checkAuthentication()
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        await session.enabler.handleExternalURL("adobepass://ios.app?code=x&state=y&mvpd=acme-cable")
        await session.enabler.getSelectedProvider()
        await session.enabler.checkAuthorization("news-channel")
        await session.enabler.getAuthorization("movies-hd")
        await session.enabler.checkPreauthorizedResources(["news-channel"])
        await session.enabler.getMetadata(.authenticationExpiry)
        await session.enabler.logout()
        let notConfigured = "The requestor is not configured."
        let callbacks = await session.collectIgnoringTracking()
        guard case .status(let configurationError) = callbacks.first else {
            Issue.record("expected a CFG status first, got \(callbacks)")
            return
        }
        expectEqual(configurationError.code, "CFG400")
        #expect(configurationError.message.contains("no-such-requestor"))
        expectCallbacks(
            Array(callbacks.dropFirst()),
            [
                .setRequestorComplete(success: false),
                .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated),
                .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication),
                .setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected),
                .status(CallRefusal.requestorNotConfigured.report),
                .selectedProvider(nil),
                .tokenRequestFailed(
                    resource: "news-channel", errorCode: ErrorCode.genericAuthorization, errorDescription: notConfigured),
                .tokenRequestFailed(
                    resource: "movies-hd", errorCode: ErrorCode.genericAuthorization, errorDescription: notConfigured),
                .preauthorizedResources([]),
                .setMetadataStatus(nil, encrypted: false, key: .authenticationExpiry),
                .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated),
            ])
        // Calls after the failure fail at once the same way; a new setRequestor recovers.
        await session.enabler.checkAuthorization("news-channel")
        expectEqual(session.ledger.takeIgnoringTracking().count, 1)
        await session.configure()
        await session.expectClean()
    }

    @Test(arguments: [
        (BackendError.network("connection refused"), "CFG404"), (.timeout, "CFG404"), (.throttled(retryAfterSeconds: 2), "CFG429"),
        (.httpStatus(503, "unavailable"), "CFG503"), (.malformedResponse("not JSON"), "CFG500"),
    ])
    func configurationFailuresAreReportedWithAStatusCode(error: BackendError, code: String) async {
        let session = SimulatedSession()
        await session.simulator.inject(.fail(error), into: .configuration)
        await session.enabler.setRequestor("sim-requestor")
        let callbacks = await session.collect()
        expectEqual(statusCode(callbacks.first), code)
        expectEqual(callbacks.last, .setRequestorComplete(success: false))
        await session.expectClean()
    }

    @Test func garbageConfigurationFails() async {
        let session = SimulatedSession()
        await session.simulator.inject(.answerGarbage, into: .configuration)
        await session.enabler.setRequestor("sim-requestor")
        let callbacks = await session.collect()
        expectEqual(statusCode(callbacks.first), "CFG500")
        expectEqual(callbacks.last, .setRequestorComplete(success: false))
        await session.expectClean()
    }

    @Test func theQueueIsBoundedAndOverflowIsRefusedAtOnce() async {
        let session = SimulatedSession()
        await session.simulator.hold(.configuration)
        await session.enabler.setRequestor("sim-requestor")
        for _ in 0..<1024 { await session.enabler.getSelectedProvider() }
        let overflow = await session.enabler.checkAuthentication()
        expectCallbacks(session.ledger.take(), [.status(CallRefusal.queueFull(limit: 1024).report)])
        expectEqual(session.ledger.answers(to: overflow).count, 1)
        await session.simulator.releaseAll(.configuration)
        let callbacks = await session.collect()
        expectEqual(callbacks.count, 1025)
        #expect(callbacks.dropFirst().allSatisfy { $0 == .selectedProvider(nil) })
        await session.expectClean()
    }

    @Test func theQueueLimitIsASetting() async {
        let session = SimulatedSession(settings: EngineSettings(queueLimit: 2))
        await session.enabler.checkAuthentication()
        await session.enabler.checkAuthentication()
        await session.enabler.checkAuthentication()
        expectCallbacks(session.ledger.take(), [.status(CallRefusal.queueFull(limit: 2).report)])
        await session.enabler.setRequestor("sim-requestor")
        let notAuthenticated = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)
        expectCallbacks(
            await session.collectIgnoringTracking(), [.setRequestorComplete(success: true), notAuthenticated, notAuthenticated])
        await session.expectClean()
    }

    @Test func aSecondSetRequestorSupersedesTheFirstWhoseLateAnswerIsIgnored() async {
        let session = SimulatedSession()
        await session.simulator.hold(.configuration)
        let first = await session.enabler.setRequestor("sim-requestor")
        let second = await session.enabler.setRequestor("sim-news")
        await session.enabler.displayDialogForTest()
        await session.simulator.whenWaiting(.configuration, count: 2)
        await session.simulator.releaseAll(.configuration)
        let callbacks = await session.collectIgnoringTracking()
        expectCallbacks(
            callbacks,
            [
                .setRequestorComplete(success: true),
                .displayProviderDialog(["acme-cable", "bluesky-tv"].compactMap { SimulatedWorld.default.provider($0)?.mvpd }),
            ])
        expectEqual(session.ledger.answers(to: first), [.setRequestorComplete(success: true)])
        expectEqual(session.ledger.answers(to: second), [.setRequestorComplete(success: true)])
        #expect(session.ledger.logs.contains(.lateResultIgnored(OperationID(1, owner: .configuration))))
        await session.expectClean(pending: [CallID(3)])
    }

    @Test func reconfiguringEndsRunningFlowsAndIgnoresTheirLateResults() async throws {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.hold(.authorize)
        let authorization = await session.enabler.getAuthorization("news-channel")
        await session.simulator.whenWaiting(.authorize)
        await session.enabler.setRequestor("sim-news")
        expectCallbacks(
            session.ledger.takeIgnoringTracking(),
            [
                .tokenRequestFailed(
                    resource: "news-channel", errorCode: ErrorCode.genericAuthorization,
                    errorDescription: "The requestor was reconfigured.")
            ])
        await session.simulator.releaseAll(.authorize)
        expectCallbacks(await session.collect(), [.setRequestorComplete(success: true)])
        expectEqual(session.ledger.answers(to: authorization).count, 1)
        #expect(session.ledger.logs.contains { if case .lateResultIgnored = $0 { true } else { false } })
        // Tokens are stored per requestor; Acme Cable allows single sign-on, so sim-news got its own
        // token for alice's login during setRequestor.
        await session.enabler.checkAuthentication()
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        try await expectEqual(session.storage.tokens(deviceID: "device-1", requestorID: "sim-news").authentication?.requestorID, "sim-news")
        await session.expectClean()
    }
}

extension AccessEnabler {
    /// getAuthentication, for tests that only need a call to be queued.
    fileprivate func displayDialogForTest() async { await getAuthentication() }
}

@Suite("checkAuthentication reads local state only", .checksExactlyOnce)
struct CheckAuthenticationTests {
    @Test func answersFromLocalStateWithoutABackendCall() async {
        let session = SimulatedSession()
        await session.configure()
        let before = session.ledger.backendRequests
        await session.enabler.checkAuthentication()
        expectEqual(session.ledger.backendRequests, before)
        expectCallbacks(
            session.ledger.take(),
            [
                .sendTrackingData(.authenticationDetection, ["false", "", "", "", "computer", "swift", "Linux"]),
                .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated),
            ])
        await session.expectClean()
    }

    @Test func answersOneWhenAuthenticatedWithoutABackendCall() async {
        let session = SimulatedSession()
        await session.signIn()
        let before = session.ledger.backendRequests
        await session.enabler.checkAuthentication()
        expectEqual(session.ledger.backendRequests, before)
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func anExpiredAuthenticationAnswersZero() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.clock.advance(by: .seconds(86_400))
        await session.enabler.checkAuthentication()
        #expect(
            session.ledger.takeIgnoringTracking()
                == [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.expectClean()
    }

    @Test func aStoredAuthenticationSurvivesANewEngineOnTheSameStorage() async {
        let storage = InMemoryTokenStorage()
        let clock = ManualClock()
        let first = SimulatedSession(storage: storage, clock: clock)
        await first.signIn()
        let second = SimulatedSession(storage: storage, clock: clock, simulator: first.simulator)
        await second.configure()
        await second.enabler.checkAuthentication()
        expectEqual(second.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await second.enabler.getAuthorization("movies-hd")
        await expectEqual(second.collectIgnoringTracking().first.map(\.name), "setToken")
        await first.expectClean()
        await second.expectClean()
    }
}
