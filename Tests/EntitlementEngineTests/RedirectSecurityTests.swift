import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTestSupport
import Testing

/// The redirect security checklist (the DocC article *Redirect security*, items 1–13), one test or more per item.
/// Every refusal is one `status` that answers the `handleExternalURL` call and changes no flow:
/// each test ends by completing the still-pending login with the genuine URL.
@Suite("handleExternalURL: the redirect security checklist", .checksExactlyOnce)
struct RedirectSecurityTests {
    /// Delivers `url`, expects the refusal `code`, then proves the flow is untouched by finishing it.
    func expectRefused(
        _ url: String, code: String, session: SimulatedSession, genuine: String,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        let before = await session.enabler.machineSnapshot.authentication
        let call = await session.enabler.handleExternalURL(url)
        let callbacks = await session.collect()
        #expect(callbacks.count == 1 && statusCode(callbacks.first) == code, "\(callbacks)", sourceLocation: sourceLocation)
        #expect(session.ledger.answers(to: call).count == 1, sourceLocation: sourceLocation)
        #expect(await session.enabler.machineSnapshot.authentication == before, sourceLocation: sourceLocation)
        await session.enabler.handleExternalURL(genuine)
        #expect(
            await session.collectIgnoringTracking() == [.setAuthenticationStatus(status: 1, errorCode: "")],
            sourceLocation: sourceLocation)
        await session.expectClean(sourceLocation: sourceLocation)
    }

    /// A started login and its genuine redirect URL (not yet delivered).
    func pendingLogin(_ session: SimulatedSession) async -> (login: String, genuine: String) {
        let login = await session.startLogin()
        return (login, await session.redirectURL(from: login))
    }

    func replacing(_ name: String, with value: String?, in url: String) -> String {
        var parameters = (try? ExternalURL.parse(url))?.parameters ?? [:]
        parameters[name] = value
        return PercentEncoding.url("adobepass://ios.app", query: parameters.sorted { $0.key < $1.key }.map { ($0.key, $0.value) })
    }

    // 1. 256-bit state from the injected random source.
    @Test func stateIs256BitsFromTheInjectedSourceAndRepeatsWithTheSeed() async throws {
        let one = SimulatedSession(seed: 42), two = SimulatedSession(seed: 42), three = SimulatedSession(seed: 43)
        var states: [String] = []
        for session in [one, two, three] {
            let login = await session.startLogin()
            let redirect = await session.redirectURL(from: login)
            states.append(try #require(queryValue("state", in: redirect)))
        }
        expectEqual(states[0].count, 43, "32 random bytes, base64url")
        expectEqual(states[0], states[1], "recorded random bytes reproduce the same state")
        #expect(states[0] != states[2])
        for session in [one, two, three] { await session.expectClean(pending: [CallID(2), CallID(3)]) }
    }

    // 2. A callback without state is refused.
    @Test func missingStateIsRefused() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await expectRefused(replacing("state", with: nil, in: genuine), code: "REDIRECT_STATE_MISSING", session: session, genuine: genuine)
    }

    @Test func emptyStateIsRefused() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await expectRefused(replacing("state", with: "", in: genuine), code: "REDIRECT_STATE_MISSING", session: session, genuine: genuine)
    }

    // 3. State is bound to the flow that started it: session B's URL delivered to session A fails.
    @Test func anotherSessionsStateIsRefused() async {
        let a = SimulatedSession(seed: 1)
        let b = SimulatedSession(deviceID: "device-2", seed: 2, clock: a.clock, simulator: a.simulator)
        let (_, genuineA) = await pendingLogin(a)
        let (_, genuineB) = await pendingLogin(b)
        await expectRefused(genuineB, code: "REDIRECT_STATE_MISMATCH", session: a, genuine: genuineA)
        await b.expectClean(pending: [CallID(2), CallID(3)])  // B's own login is still waiting
    }

    @Test func aForgedStateIsRefused() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        let forged = replacing("state", with: String(repeating: "A", count: 43), in: genuine)
        await expectRefused(forged, code: "REDIRECT_STATE_MISMATCH", session: session, genuine: genuine)
    }

    // 4 and 12. State is single use; a replayed URL never causes a second profile read.
    @Test func aReplayedURLIsRefusedAndTheProfileIsReadOnce() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await session.enabler.handleExternalURL(genuine)
        let replay = await session.enabler.handleExternalURL(genuine)
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(statusCode(callbacks.first), "REDIRECT_NO_PENDING_FLOW")
        expectEqual(callbacks.last, .setAuthenticationStatus(status: 1, errorCode: ""))
        expectEqual(session.ledger.answers(to: replay).count, 1)
        expectEqual(session.ledger.backendRequests.filter { $0 == .profileByCode }.count, 1)
        await session.expectClean()
    }

    // 5. A callback with no pending flow is side-effect free.
    @Test func aCallbackWithNoPendingFlowChangesNothing() async {
        let session = SimulatedSession()
        await session.signIn()
        let before = await session.enabler.machineSnapshot.authentication
        await session.enabler.handleExternalURL("adobepass://ios.app?code=abc&state=def&mvpd=acme-cable")
        expectEqual(statusCode(session.ledger.take().first), "REDIRECT_NO_PENDING_FLOW")
        await expectEqual(session.enabler.machineSnapshot.authentication, before)
        await session.expectClean()
    }

    // 6. error= is checked against the state first; with the right state it ends the flow.
    @Test func aForgedErrorWithAWrongStateDoesNotCancelTheLogin() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        let forged = "adobepass://ios.app?error=access_denied&state=wrong&mvpd=acme-cable"
        await expectRefused(forged, code: "REDIRECT_STATE_MISMATCH", session: session, genuine: genuine)
    }

    @Test func anErrorWithTheRightStateEndsTheFlowWithAGenericError() async {
        let session = SimulatedSession()
        let login = await session.startLogin()
        let denied = await session.userAgent.cancelLogin(at: login).appURL ?? ""
        let call = await session.enabler.handleExternalURL(denied)
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(statusCode(callbacks.first), "REDIRECT_PROVIDER_ERROR")
        expectEqual(callbacks.last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication))
        expectEqual(session.ledger.answers(to: call), [callbacks.last!])
        await expectEqual(session.enabler.machineSnapshot.authentication, .unauthenticated)
        await session.expectClean()
    }

    // 7. Exact match of scheme, host, port and path.
    @Test(arguments: [
        "adobepass://ios.app/", "ADOBEPASS://ios.app", "adobepass://IOS.app", "adobepass://ios.app/extra",
        "adobepass://ios.app:8080", "https://ios.app", "adobepass://ios.app.evil.example",
    ])
    func aDifferentRedirectURLIsRefused(base: String) async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        let query = genuine[genuine.firstIndex(of: "?")!...]
        await expectRefused(base + query, code: "REDIRECT_URL_MISMATCH", session: session, genuine: genuine)
    }

    // 8. Duplicated parameters are refused.
    @Test(arguments: ["state", "mvpd"])
    func aDuplicatedParameterIsRefused(name: String) async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        let value = queryValue(name, in: genuine) ?? ""
        await expectRefused(
            genuine + "&\(name)=\(PercentEncoding.encode(value))", code: "REDIRECT_DUPLICATE_PARAMETER", session: session,
            genuine: genuine)
    }

    @Test(arguments: ["adobepass://ios.app?code=%zz", "adobepass://ios.app#code=1", "not a url", ""])
    func aMalformedURLIsRefused(url: String) async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await expectRefused(url, code: "REDIRECT_MALFORMED", session: session, genuine: genuine)
    }

    // 9. No open redirector: nothing from a callback is ever navigated to.
    @Test func aRedirectTargetInTheCallbackIsNeverFollowed() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await session.enabler.handleExternalURL(genuine + "&redirect_to=" + PercentEncoding.encode("https://evil.example/"))
        let callbacks = await session.collect()
        #expect(!callbacks.contains { if case .navigateToUrl(let url) = $0 { url.contains("evil") } else { false } })
        expectEqual(callbacks.last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await session.expectClean()
    }

    // 10. Mix-up defence: the callback must come from the MVPD chosen for this flow.
    @Test func aCallbackFromAnotherMVPDIsRefused() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await expectRefused(
            replacing("mvpd", with: "bluesky-tv", in: genuine), code: "REDIRECT_PROVIDER_MISMATCH", session: session,
            genuine: genuine)
    }

    @Test func aCallbackNamingNoMVPDIsRefused() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await expectRefused(
            replacing("mvpd", with: nil, in: genuine), code: "REDIRECT_PROVIDER_MISMATCH", session: session, genuine: genuine)
    }

    // 11. PKCE protected a code carried by the redirect. REST API V2 puts none there: the engine
    // holds the session's code and reads the profile by it, so what binds the redirect to the flow
    // is the state in the redirect URL the engine sent with the session. A code planted in the
    // redirect is never used.
    @Test func theProfileIsReadByTheSessionsCodeNeverByOneInTheRedirect() async throws {
        let session = SimulatedSession()
        let (login, genuine) = await pendingLogin(session)
        let state = try #require(queryValue("state", in: genuine))
        #expect(!login.contains(state), "the login URL (the service's) never carries the state")
        guard case .login(let flow, .awaitingRedirect) = await session.enabler.machineSnapshot.authentication, let code = flow.code else {
            Issue.record("no login waiting")
            return
        }
        #expect(login.hasSuffix("/" + code))
        await session.enabler.handleExternalURL(genuine + "&code=PLANTED1")
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        expectEqual(session.ledger.backendRequests.filter { $0 == .profileByCode }.count, 1)
        await session.expectClean()
    }

    // 13. A pending login expires (default 10 minutes); its late callback is refused as expired.
    @Test func aLoginExpiresAfterTenMinutesAndItsLateURLIsRefused() async {
        let session = SimulatedSession()
        let (_, genuine) = await pendingLogin(session)
        await session.clock.advance(by: .seconds(599))
        #expect(session.ledger.take().isEmpty)
        await session.clock.advance(by: .seconds(1))
        let expired = session.ledger.takeIgnoringTracking()
        expectEqual(statusCode(expired.first), "LOGIN_EXPIRED")
        expectEqual(expired.last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication))
        await session.enabler.handleExternalURL(genuine)
        expectEqual(statusCode(session.ledger.take().first), "REDIRECT_EXPIRED")
        #expect(session.ledger.backendRequests.filter { $0 == .profileByCode }.isEmpty)
        await session.expectClean()
    }

    @Test func theRedirectTimeoutIsConfigurableWithinOneToTenMinutes() async {
        expectEqual(EngineSettings(redirectTimeout: .seconds(5)).redirectTimeout, .seconds(60))
        expectEqual(EngineSettings(redirectTimeout: .seconds(3600)).redirectTimeout, .seconds(600))
        let session = SimulatedSession(settings: EngineSettings(redirectTimeout: .seconds(90)))
        _ = await pendingLogin(session)
        await session.clock.advance(by: .seconds(90))
        expectEqual(session.ledger.takeIgnoringTracking().last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication))
        await session.expectClean()
    }

    @Test func aURLArrivingAfterTheDeadlineBeforeTheTimerFiresIsRefusedAsExpired() async {
        // The machine checks the deadline itself, so a slow timer never lets a stale login through.
        var machine = EntitlementMachine(deviceID: "device-1")
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        let start = Timestamp(milliseconds: 1_000)
        let session = V2Session(
            actionName: .authenticate, actionType: .interactive, reasonType: .none, url: "https://sp/authenticate/r/C",
            code: "C", sessionID: "sid", serviceProvider: "r", notBefore: start, notAfter: start.adding(.seconds(1800)))
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: start)
        _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("m")), at: start)
        _ = machine.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
        _ = machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .session(session)), at: start)
        let late = start.adding(.seconds(600))
        let actions = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=s&mvpd=m")), at: late).effects
        expectEqual(actions.last, .emit(.status(CallRefusal.redirect(.expired).report), answering: [CallID(3)]))
        #expect(actions.contains(.emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication), answering: [CallID(2)])))
        expectEqual(machine.authentication, .unauthenticated)
    }
}
