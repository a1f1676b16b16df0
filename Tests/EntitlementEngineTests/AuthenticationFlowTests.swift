import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

@Suite("C. getAuthentication: picker, session, MVPD login, redirect, profile", .checksExactlyOnce)
struct AuthenticationFlowTests {
    let mvpds = SimulatedWorld.default.requestor("sim-requestor")!.mvpdIDs.compactMap {
        SimulatedWorld.default.provider($0)?.mvpd
    }

    @Test func theWholeFlowEndsInStatusOneAndAnswersEveryCallOfTheFlowOnce() async throws {
        let session = SimulatedSession()
        await session.configure()
        let get = await session.enabler.getAuthentication()
        expectCallbacks(session.ledger.take(), [.displayProviderDialog(mvpds)])
        let select = await session.enabler.setSelectedProvider("acme-cable")
        expectEqual(session.ledger.take(), [.sendTrackingData(.mvpdSelection, ["acme-cable", "computer", "swift", "Linux"])])
        // The login URL is the session's: it arrives with the answer to `POST sessions`.
        let callbacks = await session.collect()
        expectEqual(callbacks.count, 1)
        let login = try #require(callbacks.lastNavigation)
        #expect(login.firstMatch(of: /^https:\/\/sp\.sim\/api\/v2\/authenticate\/sim-requestor\/[A-Z2-9]{8}$/) != nil, "\(login)")
        let (_, handled) = await session.logIn(as: "alice", password: "wonderland")
        let finished = session.ledger.take()
        expectEqual(finished.last, .setAuthenticationStatus(status: 1, errorCode: ""))
        guard case .sendTrackingData(.authenticationDetection, let data) = finished.first else {
            Issue.record("expected authenticationDetection tracking, got \(finished)")
            return
        }
        expectEqual(data.count, 7)
        #expect(data[0] == "true" && data[1] == "acme-cable" && data[2].count == 32 && data[3] == "false")
        #expect(!data.contains("acme-7f3a"), "the user id is hashed, never sent in clear")
        for call in [get, select, try #require(handled)] {
            expectEqual(session.ledger.answers(to: call), [.setAuthenticationStatus(status: 1, errorCode: "")])
        }
        await session.expectClean()
    }

    @Test func alreadyAuthenticatedAnswersOneWithoutAnyUI() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.getAuthentication()
        expectCallbacks(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func aRememberedProviderGoesStraightToTheLoginPage() async throws {
        let session = SimulatedSession()
        await session.signIn()
        await session.clock.advance(by: .seconds(86_400))  // the authentication expires; the choice is remembered
        await session.enabler.getAuthentication()
        let callbacks = await session.collect()
        expectEqual(callbacks.count, 1)
        _ = try #require(callbacks.lastNavigation)
        expectEqual(session.ledger.backendRequests.suffix(1), [.createSession], "no picker: a session at once")
        await session.logIn(as: "alice", password: "wonderland")
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func forceAuthnRunsANewLoginEvenWhenAuthenticated() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.getAuthentication(forceAuthn: true)
        #expect(await session.collect().lastNavigation != nil, "the remembered provider's login page opens again")
        await session.enabler.checkAuthentication()
        #expect(
            session.ledger.takeIgnoringTracking()
                == [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.logIn(as: "alice", password: "wonderland")
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func aSecondGetAuthenticationJoinsTheRunningFlow() async throws {
        let session = SimulatedSession()
        await session.configure()
        let first = await session.enabler.getAuthentication()
        let dialog = session.ledger.take()
        expectEqual(dialog.map(\.name), ["displayProviderDialog"])
        let second = await session.enabler.getAuthentication()
        expectEqual(session.ledger.take(), dialog, "the same dialog again (the device may have lost it), no second flow")
        #expect(session.ledger.logs.contains(.joined(second, flow: "the running login")))
        await session.enabler.setSelectedProvider("acme-cable")
        await session.settle()  // the session is created: the login awaits its redirect
        _ = session.ledger.take()
        let third = await session.enabler.getAuthentication()  // joins while awaiting the redirect
        await session.settle()  // the login's profile is read (not signed in yet): its page goes out again
        expectEqual(session.ledger.takeIgnoringTracking().map(\.name), ["navigateToUrl"])
        await session.logIn(as: "alice", password: "wonderland")
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        for call in [first, second, third] { #expect(session.ledger.answers(to: call).count == 1) }
        await session.expectClean()
    }

    @Test func aFailedLoginLeavesTheFlowWaitingAndARetrySucceeds() async {
        let session = SimulatedSession()
        let url = await session.startLogin()
        let wrong = await session.userAgent.logIn(at: url, username: "alice", password: "wrong")
        #expect(wrong.appURL == nil)
        let right = await session.redirectURL(from: url)
        await session.enabler.handleExternalURL(right)
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func aFailedProfileReadEndsTheFlowWithAGenericError() async {
        let session = SimulatedSession()
        let url = await session.startLogin()
        await session.simulator.inject(.fail(.network("reset")), into: .profileByCode)
        await session.enabler.handleExternalURL(await session.redirectURL(from: url))
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(statusCode(callbacks.first), "LOGIN_FAILED")
        expectEqual(callbacks.last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication))
        await session.expectClean()
    }

    @Test func garbageFromTheProfileReadIsAFailureNotACrash() async {
        let session = SimulatedSession()
        let url = await session.startLogin()
        await session.simulator.inject(.answerGarbage, into: .profileByCode)
        await session.enabler.handleExternalURL(await session.redirectURL(from: url))
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(callbacks.last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication))
        await session.expectClean()
    }
}

@Suite("setSelectedProvider: choose, refuse, cancel", .checksExactlyOnce)
struct SelectedProviderTests {
    @Test func anUnknownIdIsRefusedAndChangesNothing() async {
        let session = SimulatedSession()
        await session.configure()
        await session.enabler.getAuthentication()
        _ = session.ledger.take()
        let before = await session.enabler.machineSnapshot.authentication
        await session.enabler.setSelectedProvider("no-such-mvpd")
        expectCallbacks(session.ledger.take(), [.status(CallRefusal.unknownProvider("no-such-mvpd").report)])
        await expectEqual(session.enabler.machineSnapshot.authentication, before)
        await session.enabler.setSelectedProvider("bluesky-tv")
        #expect(await session.collect().lastNavigation != nil)
        await session.logIn(as: "carol", password: "carolina")
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func cancelResetsTheFlowAndCancellingTwiceIsHarmless() async {
        let session = SimulatedSession()
        let url = await session.startLogin()
        let cancel = await session.enabler.setSelectedProvider(nil)
        let cancelled = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected)
        expectCallbacks(session.ledger.takeIgnoringTracking(), [cancelled])
        expectEqual(session.ledger.answers(to: cancel), [cancelled])
        await session.enabler.setSelectedProvider(nil)
        expectCallbacks(session.ledger.takeIgnoringTracking(), [cancelled])
        await expectEqual(session.enabler.machineSnapshot.authentication, .unauthenticated)
        // The cancelled flow's redirect is now refused; a new login starts at once and succeeds.
        await session.enabler.handleExternalURL(await session.redirectURL(from: url))
        expectEqual(statusCode(session.ledger.take().first), "REDIRECT_NO_PENDING_FLOW")
        await session.enabler.getAuthentication()
        expectEqual(session.ledger.take().first?.name, "displayProviderDialog", "the choice was cleared by the cancel")
        await session.enabler.setSelectedProvider("acme-cable")
        _ = await session.collect()
        await session.logIn(as: "alice", password: "wonderland")
        expectEqual(session.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func cancelAtThePickerAnswersGetAuthentication() async {
        let session = SimulatedSession()
        await session.configure()
        let get = await session.enabler.getAuthentication()
        _ = session.ledger.take()
        await session.enabler.setSelectedProvider(nil)
        expectEqual(session.ledger.answers(to: get), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected)])
        _ = session.ledger.take()
        await session.expectClean()
    }

    @Test func choosingAgainWhileAwaitingTheRedirectInvalidatesTheOldState() async throws {
        let session = SimulatedSession()
        let first = await session.startLogin()
        guard case .login(let flow, .awaitingRedirect) = await session.enabler.machineSnapshot.authentication,
            let old = flow.secrets?.state
        else {
            Issue.record("no login waiting")
            return
        }
        await session.enabler.setSelectedProvider("bluesky-tv")
        let second = try #require(await session.collect().lastNavigation)
        #expect(first != second, "a new session, a new code")
        #expect(await session.userAgent.logIn(at: first, username: "alice", password: "wonderland").appURL == nil, "the service replaced the old session")
        await session.enabler.handleExternalURL("adobepass://ios.app?state=\(old)&mvpd=acme-cable")
        expectEqual(statusCode(await session.collect().first), "REDIRECT_STATE_MISMATCH")
        await session.enabler.handleExternalURL(await session.redirectURL(from: second, username: "carol", password: "carolina"))
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func selectingWhileAuthenticatedIsRefusedAndCancelSignsOut() async throws {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.setSelectedProvider("bluesky-tv")
        expectCallbacks(session.ledger.take(), [.status(CallRefusal.alreadyAuthenticated.report)])
        await session.enabler.setSelectedProvider(nil)
        expectCallbacks(
            session.ledger.takeIgnoringTracking(),
            [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected)])
        await session.enabler.checkAuthentication()
        #expect(
            session.ledger.takeIgnoringTracking()
                == [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        try await expectEqual(session.storage.tokens(deviceID: "device-1", requestorID: "sim-requestor"), .empty)
        await session.expectClean()
    }

    @Test func selectingWithoutGetAuthenticationStartsTheLogin() async {
        let session = SimulatedSession()
        await session.configure()
        let select = await session.enabler.setSelectedProvider("delta-satellite")
        #expect(await session.collect().lastNavigation != nil)
        await session.logIn(as: "erin", password: "evergreen")
        expectEqual(session.ledger.answers(to: select), [.setAuthenticationStatus(status: 1, errorCode: "")])
        _ = session.ledger.take()
        await session.expectClean()
    }

    @Test func getSelectedProviderAnswersNilThenTheChoice() async {
        let session = SimulatedSession()
        await session.configure()
        await session.enabler.getSelectedProvider()
        expectEqual(session.ledger.take(), [.selectedProvider(nil)])
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("coastal-fiber")
        _ = await session.collect()
        await session.enabler.getSelectedProvider()
        expectEqual(session.ledger.take(), [.selectedProvider(SimulatedWorld.default.provider("coastal-fiber")?.mvpd)])
        await session.expectClean(pending: [CallID(3), CallID(4)])
    }
}
