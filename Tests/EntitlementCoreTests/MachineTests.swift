import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTestSupport
import Testing

/// The pure machine, driven without an actor, backend or clock: one input, the whole action list.
@Suite("EntitlementMachine, driven directly")
struct MachineTests {
    let t0 = Timestamp(milliseconds: 1_000_000)
    let acme = MVPD(id: "acme", displayName: "Acme")
    let sky = MVPD(id: "sky", displayName: "Sky")
    var configuration: RequestorConfiguration { RequestorConfiguration(requestorID: "req", mvpds: [acme, sky]) }
    let secrets = FlowSecrets(state: "STATE")
    let context = RequestContext(requestorID: "req", deviceID: "dev")
    var session: V2Session {
        V2Session(
            actionName: .authenticate, actionType: .interactive, reasonType: .none, url: "https://sp/authenticate/req/C0DE",
            code: "C0DE", sessionID: "sid", mvpd: "acme", serviceProvider: "req", notBefore: t0, notAfter: t0.adding(.seconds(1800)))
    }

    /// A regular profile of `user`, valid for an hour.
    func profile(_ user: String = "user") -> V2Profile {
        V2Profile(
            notBefore: t0, notAfter: t0.adding(.seconds(3600)), issuer: "acme", kind: .regular,
            attributes: ["userID": .init(value: .string(user)), "zip": .init(value: .array(["10001"]), encrypted: true)])
    }

    func tracking(_ success: Bool, mvpd: String = "", guid: String = "", cached: Bool = false) -> Action {
        .emit(
            .sendTrackingData(
                .authenticationDetection, [success ? "true" : "false", mvpd, guid, success ? (cached ? "true" : "false") : "", "unknown", "unknown", "unknown"]),
            answering: [])
    }

    /// A machine that completed setRequestor (call #1, operation #1).
    func configured(_ stored: StoredTokens = .empty) -> EntitlementMachine {
        var machine = EntitlementMachine(deviceID: "dev")
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, stored), at: t0)
        return machine
    }

    /// A machine awaiting the redirect of flow #1 chosen by call #2 (its session was operation #2).
    func awaitingRedirect() -> EntitlementMachine {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        _ = machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0)
        _ = machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .session(session)), at: t0)
        return machine
    }

    // MARK: - Configuration region

    @Test func givenUnconfigured_whenACallArrives_itIsQueuedWithNoAction() {
        var machine = EntitlementMachine(deviceID: "dev")
        expectEqual(machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0).effects.apartFromDeadlines, [])
        expectEqual(machine.queue, [EntitlementMachine.QueuedCall(id: CallID(1), call: .checkAuthentication)])
    }

    @Test func givenUnconfigured_whenSetRequestor_loadsTheConfiguration() {
        var machine = EntitlementMachine(deviceID: "dev")
        #expect(
            machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: ["https://sp"])), at: t0).effects.apartFromDeadlines
                == [.loadConfiguration(OperationID(1, owner: .configuration), .configuration(RequestContext(requestorID: "req", deviceID: "dev")))])
        expectEqual(machine.configuration, .configuring(requestorID: "req", operation: OperationID(1, owner: .configuration), calls: [CallID(1)]))
    }

    @Test func givenConfiguring_whenLoaded_completesThenResubmitsTheQueueInOrder() {
        var machine = EntitlementMachine(deviceID: "dev")
        _ = machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0)
        _ = machine.handle(.callReceived(CallID(2), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.callReceived(CallID(3), .getSelectedProvider), at: t0)
        let held = machine.queue
        let step = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: t0)
        var expected = MachineStep(effects: [.emit(.setRequestorComplete(success: true), answering: [CallID(2)])], resubmitted: held)
        expected.storeFollowing = .follow(requestorID: "req")
        expectEqual(step.apartFromDeadlines, expected)
        expectEqual(held.map(\.id), [CallID(1), CallID(3)])
        #expect(machine.queue.isEmpty)
        expectEqual(machine.authentication, .unauthenticated)
        // Each held call then runs as its own input, in order.
        #expect(
            machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0).effects.apartFromDeadlines == [
                tracking(false),
                .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [CallID(1)]),
            ])
    }

    /// A step says what the shell does with each part: a provider chosen saves the choice first, then
    /// tracks it, and has the flow's secrets drawn; the held calls of a configuration come back as calls.
    @Test func aStepCutsTheActionsByWhatTheShellDoesWithThem() {
        var machine = configured()
        let chosen = machine.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        #expect(chosen.save?.tokens.selectedProvider == "acme" && chosen.save?.requestorID == "req")
        expectEqual(chosen.effects, [.emit(.sendTrackingData(.mvpdSelection, ["acme", "unknown", "unknown", "unknown"]), answering: [])])
        #expect(chosen.secretsToDraw == [FlowID(1)] && chosen.resubmitted.isEmpty)

        var starting = EntitlementMachine(deviceID: "dev")
        _ = starting.handle(.callReceived(CallID(1), .checkAuthentication), at: t0)
        _ = starting.handle(.callReceived(CallID(2), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        let held = starting.queue
        let loaded = starting.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: t0)
        #expect(loaded.save == nil && loaded.secretsToDraw.isEmpty)
        expectEqual(loaded.effects.apartFromDeadlines, [.emit(.setRequestorComplete(success: true), answering: [CallID(2)])])
        expectEqual(loaded.resubmitted, held)
    }

    @Test func recordedRowsNameTheRegionStatesConditionAndActions() {
        var machine = EntitlementMachine(deviceID: "dev")
        machine.recordsTransitions = true
        _ = machine.handle(.callReceived(CallID(1), .checkAuthentication), at: t0)
        expectEqual(machine.lastTransitions.map(\.description), ["configuration: unconfigured --> unconfigured : entitlementCall [queueHasRoom] / enqueue"])
        _ = machine.handle(.callReceived(CallID(2), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: t0)
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
        expectEqual(machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: t0).effects.apartFromDeadlines, [.log(.lateResultIgnored(OperationID(1, owner: .configuration)))])
        #expect(machine.handle(.configurationLoaded(OperationID(2, owner: .configuration), configuration, .empty), at: t0).effects.apartFromDeadlines.first
            == .emit(.setRequestorComplete(success: true), answering: [CallID(1), CallID(2)]))
    }

    @Test func givenStoredTokens_whenLoaded_onlyValidOnesForThisRequestorAndItsMVPDsCount() {
        let valid = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        let machine = configured(StoredTokens(authentication: valid, selectedProvider: "acme"))
        expectEqual(machine.authentication, .authenticated(valid))
        for stale in [
            AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0),  // expired
            AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(60))),  // inside the leeway
            AuthenticationToken(mvpdID: "gone", requestorID: "req", userID: "u", expires: t0.adding(.seconds(60))),
            AuthenticationToken(mvpdID: "acme", requestorID: "other", userID: "u", expires: t0.adding(.seconds(60))),
        ] {
            var machine = EntitlementMachine(deviceID: "dev")
            _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
            let step = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: stale)), at: t0)
            expectEqual(machine.authentication, .unauthenticated)
            expectEqual(step.save, MachineStep.Save(tokens: .empty, requestorID: "req"), "the store is sanitized")
        }
    }

    // MARK: - Authentication region

    @Test func givenUnauthenticated_whenGetAuthentication_showsTheDialog() {
        var machine = configured()
        #expect(machine.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: t0).effects.apartFromDeadlines
            == [.emit(.displayProviderDialog([acme, sky]), answering: [])])
        expectEqual(machine.authentication, .login(LoginFlow(id: FlowID(1), mvpd: nil, secrets: nil, deadline: nil, waiters: [CallID(2)], data: [:]), .selectingProvider))
    }

    @Test func givenSelectingProvider_whenAProviderIsChosen_tracksPersistsAndDrawsSecrets() {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: t0)
        #expect(
            machine.handle(.callReceived(CallID(3), .setSelectedProvider("acme")), at: t0).apartFromDeadlines
                == MachineStep(
                    save: MachineStep.Save(tokens: StoredTokens(selectedProvider: "acme", deviceID: "dev"), requestorID: "req"),
                    effects: [.emit(.sendTrackingData(.mvpdSelection, ["acme", "unknown", "unknown", "unknown"]), answering: [])],
                    secretsToDraw: [FlowID(2)]))
    }

    @Test func givenPreparingLogin_whenSecretsAreDrawn_createsASessionWhoseRedirectURLCarriesTheState() {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        #expect(
            machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0).effects.apartFromDeadlines == [
                .callBackend(
                    OperationID(2, owner: .authentication),
                    .createSession(
                        context, mvpd: "acme", domainName: nil, redirectURL: "adobepass://ios.app?state=STATE&mvpd=acme"))
            ])
        expectEqual(machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0).effects.apartFromDeadlines, [.log(.lateSecretsIgnored(FlowID(1)))])
    }

    @Test func givenCreatingSession_whenTheSessionAnswers_savesThePendingLoginStartsTheDeadlineAndNavigates() {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        _ = machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0)
        let pending = PendingLogin(mvpdID: "acme", state: "STATE", code: "C0DE", deadline: t0.adding(.seconds(600)), url: "https://sp/authenticate/req/C0DE")
        #expect(
            machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .session(session)), at: t0).apartFromDeadlines
                == MachineStep(
                    save: MachineStep.Save(tokens: StoredTokens(selectedProvider: "acme", deviceID: "dev", pendingLogin: pending), requestorID: "req"),
                    effects: [
                        .startTimer(.redirectDeadline(FlowID(1)), at: t0.adding(.seconds(600))),
                        .emit(.navigateToUrl("https://sp/authenticate/req/C0DE"), answering: []),
                    ]), "the pending login is saved, so another instance can complete it")
    }

    @Test func aSessionThatEndsBeforeTheRedirectTimeoutShortensTheDeadline() {
        var machine = configured()
        _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        _ = machine.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0)
        var short = session
        short.notAfter = t0.adding(.seconds(120))
        let actions = machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .session(short)), at: t0).effects.apartFromDeadlines
        #expect(actions.contains(.startTimer(.redirectDeadline(FlowID(1)), at: t0.adding(.seconds(120)))))
    }

    @Test func givenAwaitingRedirect_whenTheGenuineURLArrives_readsTheProfileByTheSessionsCodeOnce() {
        var machine = awaitingRedirect()
        let step = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=STATE&mvpd=acme")), at: t0)
        let completing = PendingLogin(
            mvpdID: "acme", state: "STATE", code: "C0DE", deadline: t0.adding(.seconds(600)), url: "https://sp/authenticate/req/C0DE",
            completing: true)
        #expect(
            step.apartFromDeadlines
                == MachineStep(
                    save: MachineStep.Save(tokens: StoredTokens(selectedProvider: "acme", deviceID: "dev", pendingLogin: completing), requestorID: "req"),
                    effects: [.cancelTimer(.redirectDeadline(FlowID(1))), .callBackend(OperationID(3, owner: .authentication), .profileByCode(context, code: "C0DE"))]),
            "the state is used up everywhere: storage says the login is completing here")
        #expect(machine.handle(.callReceived(CallID(4), .handleExternalURL("adobepass://ios.app?state=STATE&mvpd=acme")), at: t0).effects.apartFromDeadlines
            == [.emit(.status(CallRefusal.redirect(.noPendingFlow).report), answering: [CallID(4)])])
    }

    @Test func givenReadingProfile_whenTheProfileArrives_authenticatesWithItsAttributesAndAnswersEveryWaiter() throws {
        var machine = awaitingRedirect()
        _ = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=STATE&mvpd=acme")), at: t0)
        let token = try #require(AuthenticationToken(profile: profile(), mvpdID: "acme", requestorID: "req"))
        #expect(token.metadata == ["userID": .text("user"), "zip": .list(["10001"])] && token.encryptedMetadata == ["zip"])
        let guid = Hex.encode(Array(SHA256.hash("user").prefix(16)))
        #expect(
            machine.handle(.backendAnswered(OperationID(3, owner: .authentication), .profiles(["acme": profile()])), at: t0).apartFromDeadlines
                == MachineStep(
                    save: MachineStep.Save(tokens: StoredTokens(authentication: token, selectedProvider: "acme", deviceID: "dev"), requestorID: "req"),
                    effects: [
                        tracking(true, mvpd: "acme", guid: guid),
                        .emit(.setAuthenticationStatus(status: 1, errorCode: ""), answering: [CallID(2), CallID(3)]),
                    ]))
        #expect(
            machine.handle(.callReceived(CallID(4), .getMetadata(.userMetadata("zip"))), at: t0).effects.apartFromDeadlines
                == [.emit(.setMetadataStatus(.list(["10001"]), encrypted: true, key: .userMetadata("zip")), answering: [CallID(4)])])
    }

    @Test func givenReadingProfile_whenItIsNotThereYet_readsAgainAFewTimesThenTheLoginFails() {
        var machine = awaitingRedirect()
        _ = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=STATE&mvpd=acme")), at: t0)
        var now = t0
        var operation = OperationID(3, owner: .authentication)
        for read in 1..<EntitlementMachine.profileReads {
            // Another MVPD's profile is not this login's either.
            let empty: [String: V2Profile] = read == 1 ? ["sky": profile()] : [:]
            #expect(
                machine.handle(.backendAnswered(operation, .profiles(empty)), at: now).effects.apartFromDeadlines
                    == [.startTimer(.profileRead(FlowID(1)), at: now.adding(.seconds(3)))])
            now = now.adding(.seconds(3))
            operation = OperationID(operation.rawValue + 1, owner: .authentication)
            #expect(
                machine.handle(.timerFired(.profileRead(FlowID(1))), at: now).effects.apartFromDeadlines
                    == [.callBackend(operation, .profileByCode(context, code: "C0DE"))])
        }
        let step = machine.handle(.backendAnswered(operation, .profiles([:])), at: now)
        let actions = step.effects.apartFromDeadlines
        expectEqual(step.save, MachineStep.Save(tokens: StoredTokens(selectedProvider: "acme", deviceID: "dev"), requestorID: "req"), "the login leaves storage")
        expectEqual(actions.first, .emit(.status(StatusReport(code: "LOGIN_FAILED", level: .error, message: "Reading the login's profile failed: the service saved no profile for this login in time.")), answering: []))
        expectEqual(actions.last, .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication), answering: [CallID(2), CallID(3)]))
        expectEqual(machine.authentication, .unauthenticated)
    }

    /// The service stamps its answers with its own clock: a device clock minutes off must neither
    /// refuse a fresh profile nor a media token, nor lose the session's time.
    @Test func aDeviceClockMinutesOffStillLogsInAndAuthorizes() {
        var machine = awaitingRedirect()
        _ = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=STATE&mvpd=acme")), at: t0)
        let serverNow = t0.adding(.seconds(120))  // this device is two minutes slow
        let profile = V2Profile(
            notBefore: serverNow, notAfter: serverNow.adding(.seconds(86_400)), issuer: "acme", kind: .regular,
            attributes: ["userID": .init(value: .string("u1"))])
        _ = machine.handle(.backendAnswered(OperationID(3, owner: .authentication), .profiles(["acme": profile])), at: t0)
        expectEqual(machine.authentication.kind, .authenticated)
        _ = machine.handle(.callReceived(CallID(4), .getAuthorization(resource: "r", data: [:])), at: t0)
        let fastService = t0.adding(.seconds(-900))  // a token the service made on a clock 15 minutes behind
        let permit = V2Decision(
            resource: "r", serviceProvider: "req", mvpd: "acme", authorized: true, source: .mvpd,
            token: V2Decision.Token(notBefore: fastService, notAfter: fastService.adding(.seconds(420)), serialized: "M"))
        let actions = machine.handle(.backendAnswered(OperationID(4, owner: .authorization), .decisions([permit])), at: t0).effects.apartFromDeadlines
        expectEqual(actions.last, .emit(.setToken(token: "M", resource: "r"), answering: [CallID(4)]))
        // A session stamped an hour ahead still gives its 30 minutes (here: the 10-minute deadline).
        var late = configured()
        _ = late.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        _ = late.handle(.flowSecretsDrawn(FlowID(1), secrets), at: t0)
        var ahead = session
        ahead.notBefore = t0.adding(.seconds(3600))
        ahead.notAfter = t0.adding(.seconds(3600 + 1800))
        let started = late.handle(.backendAnswered(OperationID(2, owner: .authentication), .session(ahead)), at: t0).effects.apartFromDeadlines
        #expect(started.contains(.startTimer(.redirectDeadline(FlowID(1)), at: t0.adding(.seconds(600)))))
    }

    /// Another instance restarted the login after this one had handed its redirect over: the
    /// new pending login is adopted, so its redirect completes here too.
    @Test func aLoginRestartedElsewhereIsAdoptedAfterTheFirstWasTaken() {
        var machine = awaitingRedirect()
        _ = machine.handle(.storageChanged(StoredTokens(selectedProvider: "sky", deviceID: "dev")), at: t0)
        let restarted = PendingLogin(mvpdID: "sky", state: "STATE2", code: "C0DE2", deadline: t0.adding(.seconds(600)))
        _ = machine.handle(.storageChanged(StoredTokens(selectedProvider: "sky", deviceID: "dev", pendingLogin: restarted)), at: t0)
        let actions = machine.handle(.callReceived(CallID(9), .handleExternalURL("adobepass://ios.app?state=STATE2&mvpd=sky")), at: t0).effects.apartFromDeadlines
        #expect(actions.contains(.callBackend(OperationID(3, owner: .authentication), .profileByCode(context, code: "C0DE2"))))
    }

    /// The first deadline's timer fires just as this instance takes up a login another instance restarted
    /// (the shell reads the store before the timer's input): the timer is late, and the restarted login,
    /// with its later deadline, goes on. (`entitle check` found the restarted login expired under its node.)
    @Test func aDeadlineTimerForAnEarlierDeadlineIsLate() {
        var machine = awaitingRedirect()
        let deadline = t0.adding(.seconds(600))
        let restarted = PendingLogin(mvpdID: "acme", state: "STATE2", code: "C0DE2", deadline: deadline.adding(.seconds(600)))
        let adopted = machine.handle(.storageChanged(StoredTokens(selectedProvider: "acme", deviceID: "dev", pendingLogin: restarted)), at: deadline)
        #expect(adopted.effects.contains(.startTimer(.redirectDeadline(FlowID(1)), at: restarted.deadline)), "\(adopted.effects)")
        let late = machine.handle(.timerFired(.redirectDeadline(FlowID(1))), at: deadline)
        expectEqual(late.effects, [.log(.lateTimerIgnored(.redirectDeadline(FlowID(1))))])
        #expect(late.save == nil && machine.authentication.kind == .awaitingRedirect)
    }

    @Test func givenAwaitingRedirect_whenTheDeadlineFires_theLoginExpires() {
        var machine = awaitingRedirect()
        let step = machine.handle(.timerFired(.redirectDeadline(FlowID(1))), at: t0.adding(.seconds(600)))
        let actions = step.effects.apartFromDeadlines
        expectEqual(actions.count, 4)
        expectEqual(step.save, MachineStep.Save(tokens: StoredTokens(selectedProvider: "acme", deviceID: "dev"), requestorID: "req"))
        expectEqual(actions.last, .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication), answering: [CallID(2)]))
        #expect(actions.contains(.cancelTimer(.redirectDeadline(FlowID(1)))))
        #expect(machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?code=C&state=STATE&mvpd=acme")), at: t0).effects.apartFromDeadlines
            == [.emit(.status(CallRefusal.redirect(.expired).report), answering: [CallID(3)])])
    }

    @Test(arguments: [
        ("adobepass://ios.app/?code=C&state=STATE&mvpd=acme", "REDIRECT_URL_MISMATCH"),
        ("adobepass://ios.app?code=C&mvpd=acme", "REDIRECT_STATE_MISSING"),
        ("adobepass://ios.app?code=C&state=STATF&mvpd=acme", "REDIRECT_STATE_MISMATCH"),
        ("adobepass://ios.app?code=C&state=STATE&mvpd=sky", "REDIRECT_PROVIDER_MISMATCH"),
        ("adobepass://ios.app?code=C&state=STATE&state=STATE&mvpd=acme", "REDIRECT_DUPLICATE_PARAMETER"),
        ("adobepass://ios.app?code=%&state=STATE&mvpd=acme", "REDIRECT_MALFORMED"),
        ("adobepass://ios.app?error=access_denied&state=nope&mvpd=acme", "REDIRECT_STATE_MISMATCH"),
    ])
    func givenAwaitingRedirect_whenABadURLArrives_itIsRefusedAndNothingChanges(url: String, code: String) {
        var machine = awaitingRedirect()
        let before = machine.authentication
        let actions = machine.handle(.callReceived(CallID(3), .handleExternalURL(url)), at: t0).effects.apartFromDeadlines
        expectEqual(actions.count, 1)
        guard case .emit(.status(let report), let answering) = actions.first else {
            Issue.record("expected one status, got \(actions)")
            return
        }
        #expect(report.code == code && answering == [CallID(3)])
        expectEqual(machine.authentication, before)
    }

    @Test func aCopyThatAnswersFromWhatTheMachineHoldsCopiesNoneOfItsSeldomWrittenFields() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        var machine = configured(StoredTokens(authentication: token, selectedProvider: "acme"))
        _ = machine.handle(.callReceived(CallID(2), .checkAuthentication), at: t0)
        var answering = machine
        let step = answering.handle(.callReceived(CallID(3), .checkAuthentication), at: t0)
        #expect(step.save == nil && step.effects.contains(.emit(.setAuthenticationStatus(status: 1, errorCode: ""), answering: [CallID(3)])))
        #expect(answering.sharesSeldomWrittenFields(with: machine), "the step copied a few words, not the machine's fields")
        var authorizing = machine
        _ = authorizing.handle(.callReceived(CallID(4), .getAuthorization(resource: "news", data: [:])), at: t0)
        #expect(!authorizing.sharesSeldomWrittenFields(with: machine), "a step that writes them writes its own copy")
        #expect(machine.authorizations.isEmpty && authorizing.authorizations.count == 1, "and the machine it was copied from keeps its own")
    }

    @Test func givenAuthenticated_whenLogout_clearsTokensFirstThenAsksTheServiceAndFollowsAnInteractiveLogout() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        var machine = configured(StoredTokens(authentication: token, selectedProvider: "acme"))
        #expect(
            machine.handle(.callReceived(CallID(2), .logout), at: t0).apartFromDeadlines
                == MachineStep(save: MachineStep.Save(tokens: .empty, requestorID: "req"), secretsToDraw: [FlowID(1)]))
        #expect(
            machine.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "BYE")), at: t0).effects.apartFromDeadlines
                == [.callBackend(OperationID(2, owner: .authentication), .logout(context, mvpd: "acme", redirectURL: "adobepass://ios.app?state=BYE"))])
        let step = V2Logout(actionName: .logout, actionType: .interactive, mvpd: "acme", url: "https://mvpd/logout")
        // The logout waiting for its redirect is saved, so any instance on the store can complete it.
        let pending = PendingLogout(state: "BYE", deadline: t0.adding(.seconds(600)), mvpdID: "acme")
        #expect(
            machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .logouts(["acme": step])), at: t0).apartFromDeadlines
                == MachineStep(
                    save: MachineStep.Save(tokens: StoredTokens(deviceID: "dev", pendingLogout: pending), requestorID: "req"),
                    effects: [
                        .startTimer(.redirectDeadline(FlowID(1)), at: t0.adding(.seconds(600))),
                        .emit(.navigateToUrl("https://mvpd/logout"), answering: []),
                    ]))
        let completed = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=BYE")), at: t0)
        let done = completed.effects
        expectEqual(completed.save, MachineStep.Save(tokens: .empty, requestorID: "req"), "the completed logout leaves the store")
        expectEqual(done.first, .cancelTimer(.redirectDeadline(FlowID(1))))
        expectEqual(done.last, .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [CallID(2), CallID(3)]))
    }

    @Test(arguments: [
        V2Logout(actionName: .complete, actionType: .none, mvpd: "acme"),
        V2Logout(actionName: .invalid, actionType: .none, mvpd: "acme"),
        V2Logout(actionName: .partnerLogout, actionType: .partnerInteractive, mvpd: "acme"),
    ])
    func givenRequestingLogout_whenNoInteractionIsNeeded_theLogoutEndsAtOnce(step: V2Logout) {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        var machine = configured(StoredTokens(authentication: token))
        _ = machine.handle(.callReceived(CallID(2), .logout), at: t0)
        _ = machine.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "BYE")), at: t0)
        #expect(
            machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .logouts(["acme": step])), at: t0).effects.apartFromDeadlines == [
                tracking(false), .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [CallID(2)]),
            ])
    }

    @Test func aDeviceWithoutAWebViewNeverWaitsForALogoutRedirect() {
        var settings = EngineSettings()
        settings.secondScreen = SecondScreen()
        var machine = EntitlementMachine(settings: settings, deviceID: "dev")
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: token, deviceID: "dev")), at: t0)
        _ = machine.handle(.callReceived(CallID(2), .logout), at: t0)
        _ = machine.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "BYE")), at: t0)
        let step = V2Logout(actionName: .logout, actionType: .interactive, mvpd: "acme", url: "https://mvpd/logout")
        let actions = machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .logouts(["acme": step])), at: t0).effects.apartFromDeadlines
        expectEqual(actions.last, .emit(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated), answering: [CallID(2)]))
        #expect(!actions.contains { if case .emit(.navigateToUrl, _) = $0 { true } else { false } })
    }

    // MARK: - Authorization region

    @Test func givenAuthenticated_whenGetAuthorizationTwice_oneDecisionTwoAnswers() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600)))
        var machine = configured(StoredTokens(authentication: token))
        #expect(machine.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0).effects.apartFromDeadlines
            == [.callBackend(OperationID(2, owner: .authorization), .authorize(context, mvpd: "acme", resource: "r"))])
        #expect(machine.handle(.callReceived(CallID(3), .getAuthorization(resource: "r", data: [:])), at: t0).effects.apartFromDeadlines
            == [.log(.joined(CallID(3), flow: "the authorization of 'r'"))])
        let permit = V2Decision(
            resource: "r", serviceProvider: "req", mvpd: "acme", authorized: true, source: .mvpd,
            token: V2Decision.Token(notBefore: t0, notAfter: t0.adding(.seconds(420)), serialized: "M"))
        let actions = machine.handle(.backendAnswered(OperationID(2, owner: .authorization), .decisions([permit])), at: t0).effects.apartFromDeadlines
        #expect(Array(actions.dropFirst()) == [
            .emit(.setToken(token: "M", resource: "r"), answering: [CallID(2)]),
            .emit(.setToken(token: "M", resource: "r"), answering: [CallID(3)]),
        ])
        #expect(machine.authorizations.isEmpty)
    }

    @Test func aDenialIsAnItemErrorWithThePartnersWords() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600)))
        var machine = configured(StoredTokens(authentication: token))
        _ = machine.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0)
        let deny = V2Decision(
            resource: "r", serviceProvider: "req", mvpd: "acme", authorized: false, source: .mvpd,
            error: V2EnhancedError(status: 403, code: "authorization_denied_by_mvpd", message: "Deny.", details: "Upgrade your package."))
        let actions = machine.handle(.backendAnswered(OperationID(2, owner: .authorization), .decisions([deny])), at: t0).effects.apartFromDeadlines
        expectEqual(actions.last, .emit(.tokenRequestFailed(resource: "r", errorCode: ErrorCode.userNotAuthorized, errorDescription: "Upgrade your package."), answering: [CallID(2)]))
        expectEqual(machine.authentication, .authenticated(token))
    }

    @Test func theExpiryLeewayCoversClockSkew() {
        // With the default 60 s leeway a token expiring in 61 s counts and one expiring in 60 s does not.
        for (seconds, counts) in [(61, true), (60, false)] {
            let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(Int64(seconds))))
            expectEqual((configured(StoredTokens(authentication: token)).authentication == .authenticated(token)), counts)
        }
        var noLeeway = EntitlementMachine(settings: EngineSettings(expiryLeeway: .zero), deviceID: "dev")
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(1)))
        _ = noLeeway.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = noLeeway.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: token)), at: t0)
        expectEqual(noLeeway.authentication, .authenticated(token))
        expectEqual(EngineSettings(expiryLeeway: .seconds(3600)).expiryLeeway, .seconds(300), "clamped to 5 minutes")
    }

    @Test func anAuthorizationNeverOutlivesItsAuthentication() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(600)))
        var machine = configured(StoredTokens(authentication: token))
        _ = machine.handle(.callReceived(CallID(2), .checkAuthorization(resource: "r", data: [:])), at: t0)
        let long = V2Decision(
            resource: "r", serviceProvider: "req", mvpd: "acme", authorized: true, source: .mvpd,
            token: V2Decision.Token(notBefore: t0, notAfter: t0.adding(.seconds(420)), serialized: "M"), notBefore: t0,
            notAfter: t0.adding(.seconds(86_400)))
        _ = machine.handle(.backendAnswered(OperationID(2, owner: .authorization), .decisions([long])), at: t0)
        expectEqual(machine.authorizationExpiries["r"], token.expires)
    }

    @Test func anAnswerGoesToTheRegionItsOperationNames() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600)))
        var machine = configured(StoredTokens(authentication: token))
        let asked = machine.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0).effects.apartFromDeadlines
        expectEqual(asked, [.callBackend(OperationID(2, owner: .authorization), .authorize(context, mvpd: "acme", resource: "r"))])
        // The same number owned by another region (or by none, as read back from a trace) is no answer to it.
        for owner in [OperationID.Owner.configuration, .authentication, .preauthorization, .account, nil] {
            let stranger = OperationID(2, owner: owner)
            expectEqual(machine.handle(.backendFailed(stranger, .timeout), at: t0).effects.apartFromDeadlines, [.log(.lateResultIgnored(stranger))])
        }
        expectEqual(machine.authorizations.count, 1)
        #expect(OperationID(2, owner: .account).rawValue == 2 && OperationID(2, owner: .account).owner == .account)
        expectEqual(OperationID((1 << 56) - 1, owner: nil).rawValue, (1 << 56) - 1)
    }

    @Test func theStepsSayWhoseStoredTokensTheShellFollows() {
        var machine = configured()
        let other = machine.handle(.callReceived(CallID(2), .setRequestor(requestorID: "other", serviceProviders: [])), at: t0)
        expectEqual(other.storeFollowing, .stop)
        let checked = machine.handle(.callReceived(CallID(3), .checkAuthentication), at: t0)
        #expect(checked.storeFollowing == nil, "queued while configuring: nothing changes")
        let loaded = machine.handle(
            .configurationLoaded(OperationID(2, owner: .configuration), RequestorConfiguration(requestorID: "other", mvpds: []), .empty), at: t0)
        expectEqual(loaded.storeFollowing, .follow(requestorID: "other"))
        expectEqual(machine.followedRequestorID, "other")
    }

    @Test func givenAnythingRunning_whenReconfigured_everyCallIsAnsweredOnce() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600)))
        var machine = configured(StoredTokens(authentication: token))
        _ = machine.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0)
        _ = machine.handle(.callReceived(CallID(3), .checkPreauthorizedResources(["r"], cache: true)), at: t0)
        let actions = machine.handle(.callReceived(CallID(4), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0).effects.apartFromDeadlines
        let answered = actions.flatMap { action -> [CallID] in
            if case .emit(_, let answering) = action { return answering }
            return []
        }
        expectEqual(answered.sorted(), [CallID(2), CallID(3)])
        expectEqual(machine.authentication, .unknown)
        #expect(machine.handle(.backendAnswered(OperationID(2, owner: .authorization), .decisions([])), at: t0).effects.apartFromDeadlines
            == [.log(.lateResultIgnored(OperationID(2, owner: .authorization)))])
    }

    /// A pre-authorization answer with one item decided and one asking to retry: the decided one is
    /// kept, only the other is asked again after the pause, and the caller gets one answer with both.
    @Test func givenPreauthorizing_whenAnItemAsksToRetry_onlyThatItemIsAskedAgain() {
        let token = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600)))
        var machine = configured(StoredTokens(authentication: token))
        let sent = machine.handle(.callReceived(CallID(2), .checkPreauthorizedResources(["a", "b"], cache: false)), at: t0).effects.apartFromDeadlines
        guard case .callBackend(let operation, .preauthorize(let context, _, let asked))? = sent.last else {
            Issue.record("no pre-authorization sent: \(sent)")
            return
        }
        expectEqual(asked, ["a", "b"])
        let retry = V2EnhancedError(status: 403, code: "network_connection_timeout", message: "m", action: .retry)
        let first = machine.handle(
            .backendAnswered(
                operation,
                .decisions([
                    V2Decision(resource: "a", serviceProvider: "req", mvpd: "acme", authorized: true, source: .mvpd),
                    V2Decision(resource: "b", serviceProvider: "req", mvpd: "acme", authorized: false, source: .mvpd, error: retry),
                ])), at: t0).effects.apartFromDeadlines
        expectEqual(first, [.startTimer(.retry(operation), at: t0.adding(.milliseconds(500)))])
        let resent = machine.handle(.timerFired(.retry(operation)), at: t0.adding(.milliseconds(500))).effects.apartFromDeadlines
        expectEqual(resent, [.callBackend(operation, .preauthorize(context, mvpd: "acme", resources: ["b"]))])
        let answered = machine.handle(
            .backendAnswered(operation, .decisions([V2Decision(resource: "b", serviceProvider: "req", mvpd: "acme", authorized: true, source: .mvpd)])),
            at: t0.adding(.milliseconds(600))).effects.apartFromDeadlines
        expectEqual(answered, [.emit(.preauthorizedResources(["a", "b"]), answering: [CallID(2)])])
    }
}

/// Tracking data describe the device the engine serves, in Adobe's vocabulary, from its `X-Device-Info`.
@Suite("Tracking data describe the device")
struct TrackingDeviceTests {
    @Test(arguments: [
        (V2DeviceInfo(model: "iPhone", version: "15,2", osName: "iOS", osVersion: "18", connectionType: "WiFi", primaryHardwareType: "MobilePhone"),
         ["mobile", "ios", "iOS"]),
        (V2DeviceInfo(model: "iPad", version: "14,1", osName: "iPadOS", osVersion: "18", connectionType: "WiFi", primaryHardwareType: "Tablet"),
         ["tablet", "ios", "iPadOS"]),
        (V2DeviceInfo(model: "Shield", version: "2", osName: "Android TV", osVersion: "11", connectionType: "LAN", primaryHardwareType: "SetTopBox"),
         ["unknown", "android", "Android TV"]),
        (V2DeviceInfo(model: "Xbox", version: "X", osName: "Xbox OS", osVersion: "10", connectionType: "LAN", primaryHardwareType: "GamesConsole"),
         ["gameconsole", "unknown", "Xbox OS"]),
        (V2DeviceInfo(model: "PC", version: "1", osName: "Windows", osVersion: "11", connectionType: "LAN", primaryHardwareType: "Desktop"),
         ["computer", "unknown", "Windows"]),
        (V2DeviceInfo(model: "Stick", version: "4", osName: "Fire OS", osVersion: "8", connectionType: "WiFi"), ["unknown", "android", "Fire OS"]),
        (V2DeviceInfo(model: "?", version: "?", osName: "", osVersion: "", connectionType: ""), ["unknown", "unknown", "unknown"]),
    ])
    func theFieldsComeFromTheDevice(device: V2DeviceInfo, expected: [String]) {
        let settings = EngineSettings(domainName: "myservice.example").describingDevice(device)
        expectEqual([settings.deviceType, settings.clientType, settings.operatingSystem], expected)
        expectEqual(settings.domainName, "myservice.example", "nothing else changes")
    }

    @Test func withoutADeviceTheFieldsSayUnknownNotTheServersPlatform() {
        let settings = EngineSettings()
        expectEqual([settings.deviceType, settings.clientType, settings.operatingSystem], ["unknown", "unknown", "unknown"])
    }
}
