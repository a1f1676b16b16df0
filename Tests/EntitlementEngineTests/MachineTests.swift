import EntitlementEngine
import Testing

/// The pure machine, driven without an actor, backend or clock: one input, the whole action list.
@Suite("EntitlementMachine, driven directly")
struct MachineTests {
    let t0 = Timestamp(milliseconds: 1_000_000)
    let acme = MVPD(id: "acme", displayName: "Acme")
    let sky = MVPD(id: "sky", displayName: "Sky")
    var configuration: RequestorConfiguration {
        RequestorConfiguration(
            requestorID: "req", mvpds: [acme, sky], authenticationEndpoint: "https://sp/authn", logoutEndpoint: "https://sp/logout")
    }
    let secrets = FlowSecrets(state: "STATE", verifier: "VERIFIER")

    func tracking(_ success: Bool, mvpd: String = "", guid: String = "", cached: Bool = false) -> Action {
        .emit(
            .sendTrackingData(
                .authenticationDetection, [success ? "true" : "false", mvpd, guid, cached ? "true" : "false", "computer", "swift", "Linux"]),
            answering: [])
    }

    /// A machine that completed setRequestor (call #1, operation #1).
    func configured(_ stored: StoredTokens = .empty) -> EntitlementMachine {
        var machine = EntitlementMachine(deviceID: "dev")
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.configurationLoaded(OperationID(1), configuration, stored), at: t0)
        return machine
    }

    /// A machine awaiting the redirect of flow #1 chosen by call #2.
    func awaitingRedirect() -> EntitlementMachine {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        _ = machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0)
        return machine
    }

    // MARK: - Configuration region

    @Test func givenUnconfigured_whenACallArrives_itIsQueuedWithNoAction() {
        var machine = EntitlementMachine(deviceID: "dev")
        #expect(machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0) == [])
        #expect(machine.queue == [EntitlementMachine.QueuedCall(id: CallID(1), call: .checkAuthentication)])
    }

    @Test func givenUnconfigured_whenSetRequestor_loadsTheConfiguration() {
        var machine = EntitlementMachine(deviceID: "dev")
        #expect(
            machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: ["https://sp"])), at: t0)
                == [.loadConfiguration(OperationID(1), .configuration(requestorID: "req", serviceProviders: ["https://sp"], deviceID: "dev", options: [:]))])
        #expect(machine.configuration == .configuring(requestorID: "req", operation: OperationID(1), calls: [CallID(1)]))
    }

    @Test func givenConfiguring_whenLoaded_completesThenResubmitsTheQueueInOrder() {
        var machine = EntitlementMachine(deviceID: "dev")
        _ = machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0)
        _ = machine.handle(.callReceived(CallID(2), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.callReceived(CallID(3), .getSelectedProvider), at: t0)
        let held = machine.queue
        let actions = machine.handle(.configurationLoaded(OperationID(1), configuration, .empty), at: t0)
        #expect(actions == [.emit(.setRequestorComplete(success: true), answering: [CallID(2)]), .resubmit(held)])
        #expect(held.map(\.id) == [CallID(1), CallID(3)])
        #expect(machine.queue.isEmpty)
        #expect(machine.authentication == .unauthenticated)
        // Each held call then runs as its own input, in order.
        #expect(
            machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0) == [
                tracking(false),
                .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [CallID(1)]),
            ])
    }

    @Test func recordedRowsNameTheRegionStatesConditionAndActions() {
        var machine = EntitlementMachine(deviceID: "dev")
        machine.recordsTransitions = true
        _ = machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0)
        #expect(machine.lastTransitions.map(\.description) == ["configuration: unconfigured --> unconfigured : entitlementCall [queueHasRoom] / enqueue"])
        _ = machine.handle(.callReceived(CallID(2), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.configurationLoaded(OperationID(1), configuration, .empty), at: t0)
        #expect(
            machine.lastTransitions.map(\.description) == [
                "configuration: configuring --> configured : configurationLoaded [current] / setRequestorComplete, restoreTokens, runQueue",
                "authentication: unknown --> unauthenticated : configurationLoaded [noValidStoredToken]",
            ])
        var silent = EntitlementMachine(deviceID: "dev")
        _ = silent.handle(.callReceived(CallID(1), .checkAuthentication), at: t0)
        #expect(silent.lastTransitions.isEmpty, "nothing is recorded unless asked")
    }

    @Test func givenConfiguring_whenAStaleConfigurationArrives_itIsLoggedAndIgnored() {
        var machine = EntitlementMachine(deviceID: "dev")
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.callReceived(CallID(2), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        #expect(machine.handle(.configurationLoaded(OperationID(1), configuration, .empty), at: t0) == [.log(.lateResultIgnored(OperationID(1)))])
        #expect(machine.handle(.configurationLoaded(OperationID(2), configuration, .empty), at: t0).first
            == .emit(.setRequestorComplete(success: true), answering: [CallID(1), CallID(2)]))
    }

    @Test func givenStoredTokens_whenLoaded_onlyValidOnesForThisRequestorAndItsMVPDsCount() {
        let valid = AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        let authorization = AuthorizationToken(value: "z", resource: "r", expires: t0.adding(.seconds(300)))
        let machine = configured(StoredTokens(authentication: valid, authorizations: ["r": authorization], selectedProvider: "acme"))
        #expect(machine.authentication == .authenticated(valid))
        #expect(machine.authorizationCache == ["r": authorization])
        for stale in [
            AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0),  // expired
            AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(60))),  // inside the leeway
            AuthenticationToken(value: "a", mvpdID: "gone", requestorID: "req", userID: "u", expires: t0.adding(.seconds(60))),
            AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "other", userID: "u", expires: t0.adding(.seconds(60))),
        ] {
            var machine = EntitlementMachine(deviceID: "dev")
            _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
            let actions = machine.handle(.configurationLoaded(OperationID(1), configuration, StoredTokens(authentication: stale, authorizations: ["r": authorization])), at: t0)
            #expect(machine.authentication == .unauthenticated)
            #expect(actions.contains(.persist(.empty, requestorID: "req")), "the store is sanitized")
        }
    }

    // MARK: - Authentication region

    @Test func givenUnauthenticated_whenGetAuthentication_showsTheDialog() {
        var machine = configured()
        #expect(machine.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: t0)
            == [.emit(.displayProviderDialog([acme, sky]), answering: [])])
        #expect(machine.authentication == .selectingProvider(LoginFlow(id: FlowID(1), mvpd: nil, secrets: nil, deadline: nil, waiters: [CallID(2)], data: [:])))
    }

    @Test func givenSelectingProvider_whenAProviderIsChosen_tracksPersistsAndDrawsSecrets() {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: t0)
        #expect(
            machine.handle(.callReceived(CallID(3), .setSelectedProvider("acme")), at: t0) == [
                .persist(StoredTokens(selectedProvider: "acme", deviceID: "dev"), requestorID: "req"),
                .emit(.sendTrackingData(.mvpdSelection, ["acme", "computer", "swift", "Linux"]), answering: []),
                .drawFlowSecrets(FlowID(2), verifier: true),
            ])
    }

    @Test func givenPreparingLogin_whenSecretsAreDrawn_startsTheDeadlineAndNavigates() {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        let url = "https://sp/authn?requestor_id=req&mso_id=acme&device_id=dev&redirect_uri=adobepass%3A%2F%2Fios.app&state=STATE"
            + "&code_challenge=\(PKCE.challenge(for: "VERIFIER"))&code_challenge_method=S256"
        let pending = PendingLogin(mvpdID: "acme", state: "STATE", verifier: "VERIFIER", deadline: t0.adding(.seconds(600)))
        #expect(
            machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0) == [
                .persist(StoredTokens(selectedProvider: "acme", deviceID: "dev", pendingLogin: pending), requestorID: "req"),
                .startTimer(.redirectDeadline(FlowID(1)), at: t0.adding(.seconds(600))), .emit(.navigateToUrl(url), answering: []),
            ], "the pending login is saved, so another instance can complete it")
        #expect(machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0) == [.log(.lateSecretsIgnored(FlowID(1)))])
    }

    @Test func givenAwaitingRedirect_whenTheGenuineURLArrives_exchangesTheCodeOnceWithTheVerifier() {
        var machine = awaitingRedirect()
        let actions = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?code=C0DE&state=STATE&mvpd=acme")), at: t0)
        let exchange = CodeExchange(
            context: RequestContext(requestorID: "req", deviceID: "dev"), mvpdID: "acme", code: "C0DE", codeVerifier: "VERIFIER",
            redirectURL: "adobepass://ios.app")
        #expect(
            actions == [
                .persist(StoredTokens(selectedProvider: "acme", deviceID: "dev"), requestorID: "req"),
                .cancelTimer(.redirectDeadline(FlowID(1))), .callBackend(OperationID(2), .exchangeCode(exchange)),
            ], "the state is used up everywhere: the pending login leaves storage")
        #expect(machine.handle(.callReceived(CallID(4), .handleExternalURL("adobepass://ios.app?code=C0DE&state=STATE&mvpd=acme")), at: t0)
            == [.emit(.status(CallRefusal.redirect(.noPendingFlow).report), answering: [CallID(4)])])
    }

    @Test func givenExchangingCode_whenTheTokenArrives_authenticatesAndAnswersEveryWaiter() {
        var machine = awaitingRedirect()
        _ = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?code=C0DE&state=STATE&mvpd=acme")), at: t0)
        let token = AuthenticationToken(value: "tok", mvpdID: "acme", requestorID: "req", userID: "user", expires: t0.adding(.seconds(3600)))
        let guid = Hex.encode(Array(SHA256.hash("user").prefix(16)))
        #expect(
            machine.handle(.backendAnswered(OperationID(2), .authenticated(token)), at: t0) == [
                .persist(StoredTokens(authentication: token, selectedProvider: "acme", deviceID: "dev"), requestorID: "req"),
                tracking(true, mvpd: "acme", guid: guid),
                .emit(.setAuthenticationStatus(status: 1, errorCode: ""), answering: [CallID(2), CallID(3)]),
            ])
    }

    @Test func givenExchangingCode_whenATokenForAnotherMVPDArrives_theLoginFails() {
        var machine = awaitingRedirect()
        _ = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?code=C0DE&state=STATE&mvpd=acme")), at: t0)
        let wrong = AuthenticationToken(value: "tok", mvpdID: "sky", requestorID: "req", userID: "user", expires: t0.adding(.seconds(3600)))
        let actions = machine.handle(.backendAnswered(OperationID(2), .authenticated(wrong)), at: t0)
        #expect(actions.last == .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication), answering: [CallID(2), CallID(3)]))
        #expect(machine.authentication == .unauthenticated)
    }

    @Test func givenAwaitingRedirect_whenTheDeadlineFires_theLoginExpires() {
        var machine = awaitingRedirect()
        let actions = machine.handle(.timerFired(.redirectDeadline(FlowID(1))), at: t0.adding(.seconds(600)))
        #expect(actions.count == 5)
        #expect(actions.first == .persist(StoredTokens(selectedProvider: "acme", deviceID: "dev"), requestorID: "req"))
        #expect(actions.last == .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication), answering: [CallID(2)]))
        #expect(actions.contains(.cancelTimer(.redirectDeadline(FlowID(1)))))
        #expect(machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?code=C&state=STATE&mvpd=acme")), at: t0)
            == [.emit(.status(CallRefusal.redirect(.expired).report), answering: [CallID(3)])])
    }

    @Test(arguments: [
        ("adobepass://ios.app/?code=C&state=STATE&mvpd=acme", "REDIRECT_URL_MISMATCH"),
        ("adobepass://ios.app?code=C&mvpd=acme", "REDIRECT_STATE_MISSING"),
        ("adobepass://ios.app?code=C&state=STATF&mvpd=acme", "REDIRECT_STATE_MISMATCH"),
        ("adobepass://ios.app?code=C&state=STATE&mvpd=sky", "REDIRECT_PROVIDER_MISMATCH"),
        ("adobepass://ios.app?state=STATE&mvpd=acme", "REDIRECT_CODE_MISSING"),
        ("adobepass://ios.app?code=C&state=STATE&state=STATE&mvpd=acme", "REDIRECT_DUPLICATE_PARAMETER"),
        ("adobepass://ios.app?code=%&state=STATE&mvpd=acme", "REDIRECT_MALFORMED"),
        ("adobepass://ios.app?error=access_denied&state=nope&mvpd=acme", "REDIRECT_STATE_MISMATCH"),
    ])
    func givenAwaitingRedirect_whenABadURLArrives_itIsRefusedAndNothingChanges(url: String, code: String) {
        var machine = awaitingRedirect()
        let before = machine.authentication
        let actions = machine.handle(.callReceived(CallID(3), .handleExternalURL(url)), at: t0)
        #expect(actions.count == 1)
        guard case .emit(.status(let report), let answering) = actions.first else {
            Issue.record("expected one status, got \(actions)")
            return
        }
        #expect(report.code == code && answering == [CallID(3)])
        #expect(machine.authentication == before)
    }

    @Test func givenAuthenticated_whenLogout_clearsTokensFirstThenDrawsTheLogoutState() {
        let token = AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(60)))
        var machine = configured(StoredTokens(authentication: token, selectedProvider: "acme"))
        #expect(
            machine.handle(.callReceived(CallID(2), .logout), at: t0) == [
                .persist(.empty, requestorID: "req"), .drawFlowSecrets(FlowID(1), verifier: false),
            ])
        let actions = machine.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "BYE", verifier: nil)), at: t0)
        #expect(actions.last == .emit(.navigateToUrl("https://sp/logout?requestor_id=req&device_id=dev&redirect_uri=adobepass%3A%2F%2Fios.app&state=BYE"), answering: []))
        let done = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=BYE")), at: t0)
        #expect(done.first == .cancelTimer(.redirectDeadline(FlowID(1))))
        #expect(done.last == .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [CallID(2), CallID(3)]))
    }

    // MARK: - Authorization region

    @Test func givenAuthenticated_whenGetAuthorizationTwice_oneRequestTwoAnswers() {
        let token = AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600)))
        var machine = configured(StoredTokens(authentication: token))
        let context = RequestContext(requestorID: "req", deviceID: "dev")
        #expect(machine.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0)
            == [.callBackend(OperationID(2), .authorize(context, authentication: token, resource: "r", data: [:]))])
        #expect(machine.handle(.callReceived(CallID(3), .getAuthorization(resource: "r", data: [:])), at: t0)
            == [.log(.joined(CallID(3), flow: "the authorization of 'r'"))])
        let authorization = AuthorizationToken(value: "z", resource: "r", expires: t0.adding(.seconds(60)))
        #expect(
            machine.handle(.backendAnswered(OperationID(2), .authorized(authorization)), at: t0) == [
                .persist(StoredTokens(authentication: token, authorizations: ["r": authorization], deviceID: "dev"), requestorID: "req"),
                .callBackend(OperationID(3), .mediaToken(context, authentication: token, authorization: authorization)),
            ])
        let actions = machine.handle(.backendAnswered(OperationID(3), .mediaToken(MediaToken(serialized: "M", resource: "r", expires: t0))), at: t0)
        #expect(Array(actions.dropFirst()) == [
            .emit(.setToken(token: "M", resource: "r"), answering: [CallID(2)]),
            .emit(.setToken(token: "M", resource: "r"), answering: [CallID(3)]),
        ])
        #expect(machine.authorizations.isEmpty)
    }

    @Test func theExpiryLeewayCoversClockSkew() {
        // With the default 60 s leeway a token expiring in 61 s counts and one expiring in 60 s does not.
        for (seconds, counts) in [(61, true), (60, false)] {
            let token = AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(Int64(seconds))))
            #expect((configured(StoredTokens(authentication: token)).authentication == .authenticated(token)) == counts)
        }
        var noLeeway = EntitlementMachine(settings: EngineSettings(expiryLeeway: .zero), deviceID: "dev")
        let token = AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(1)))
        _ = noLeeway.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = noLeeway.handle(.configurationLoaded(OperationID(1), configuration, StoredTokens(authentication: token)), at: t0)
        #expect(noLeeway.authentication == .authenticated(token))
        #expect(EngineSettings(expiryLeeway: .seconds(3600)).expiryLeeway == .seconds(300), "clamped to 5 minutes")
    }

    @Test func anAuthorizationNeverOutlivesItsAuthentication() {
        let token = AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        var machine = configured(StoredTokens(authentication: token))
        _ = machine.handle(.callReceived(CallID(2), .checkAuthorization(resource: "r", data: [:])), at: t0)
        let long = AuthorizationToken(value: "z", resource: "r", expires: t0.adding(.seconds(86_400)))
        _ = machine.handle(.backendAnswered(OperationID(2), .authorized(long)), at: t0)
        #expect(machine.authorizationCache["r"]?.expires == token.expires)
    }

    @Test func givenAnythingRunning_whenReconfigured_everyCallIsAnsweredOnce() {
        let token = AuthenticationToken(value: "a", mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600)))
        var machine = configured(StoredTokens(authentication: token))
        _ = machine.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0)
        _ = machine.handle(.callReceived(CallID(3), .checkPreauthorizedResources(["r"], cache: true)), at: t0)
        _ = machine.handle(.callReceived(CallID(4), .getMetadata(.userMetadata("zip"))), at: t0)
        let actions = machine.handle(.callReceived(CallID(5), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        let answered = actions.flatMap { action -> [CallID] in
            if case .emit(_, let answering) = action { return answering }
            return []
        }
        #expect(answered.sorted() == [CallID(2), CallID(3), CallID(4)])
        #expect(machine.authentication == .unknown)
        #expect(machine.handle(.backendAnswered(OperationID(2), .authorized(AuthorizationToken(value: "z", resource: "r", expires: t0))), at: t0)
            == [.log(.lateResultIgnored(OperationID(2)))])
    }
}
