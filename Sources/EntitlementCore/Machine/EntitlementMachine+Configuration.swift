import EntitlementSupport

/// The configuration region: `setRequestor`, the configuration's arrival or failure, the silent sign-in
/// that may come before it completes, and the queue of calls held until it does.
extension EntitlementMachine {
    /// `setRequestor`: configures `requestorID`; a requestor configured before is abandoned, and what it
    /// leaves is saved for it (the step's save).
    mutating func setRequestorCalled(_ id: CallID, requestorID: String) -> (effects: [Action], save: MachineStep.Save?) {
        guard !requestorID.isEmpty else {
            recordCall(.emptyArgument, .status)
            return (refuse(id, .invalidArgument("the requestor id is empty")), nil)
        }
        var actions: [Action] = []
        var save: MachineStep.Save?
        var answering = [id]
        switch configuration {
        case .configuring(_, _, let earlier), .signingIn(_, _, let earlier):
            answering = earlier + [id]
            // A verification or renewal the loaded configuration started ends too.
            actions += abandonAccountWork()
        case .configured(let current):
            // A `setRequestor` still waiting for the providers' verifications is answered with this one.
            answering = (setRequestorWait?.calls ?? []) + [id]
            let abandoned = abandonEverything(because: "The requestor was reconfigured.", saving: current)
            actions += abandoned.effects
            save = abandoned.save
        case .unconfigured, .failed:
            break
        }
        if setRequestorWait != nil { setRequestorWait = nil }
        let operation = nextOperation(.configuration)
        configurationOperation = operation
        moveConfiguration(
            to: .configuring(requestorID: requestorID, operation: operation, calls: answering), nil, .loadConfiguration)
        actions.append(
            .loadConfiguration(
                operation,
                .configuration(RequestContext(requestorID: requestorID, deviceID: deviceID, options: options))))
        return (actions, save)
    }

    /// The configuration arrived with what the store holds: the stored tokens are restored (or a silent
    /// sign-in starts) and each provider of the chain is asked what the user may access; `setRequestor` is
    /// answered once they all answered (``SetRequestorWait``).
    mutating func configurationLoaded(
        _ operation: OperationID, _ loaded: RequestorConfiguration, _ stored: StoredTokens, others: [AuthenticationToken]
    ) -> [Action] {
        guard case .configuring(_, let expected, let calls) = configuration, expected == operation else {
            return [.log(.lateResultIgnored(operation))]
        }
        configurationFailures = 0
        if stored.deviceID ?? deviceID == deviceID { providerAccounts = stored.providerAccounts }
        let verifications = verifyAtSetRequestor(loaded)
        let silent = signInSilently(loaded, stored, others: others, calls: calls)
        guard silent.isEmpty else { return verifications + silent }
        if !verifyingAtSetRequestor {
            moveConfiguration(to: .configured(loaded), .current, .setRequestorComplete, .restoreTokens, .runQueue)
        } else {
            moveConfiguration(to: .configured(loaded), .verifyingProviders, .restoreTokens)
        }
        var actions = verifications
        persisted = stored
        var stored = stored
        if let owner = stored.deviceID, owner != deviceID {
            // Tokens bound to another device never count here: clear them and say so (SEC412).
            stored = .empty
            moveAuthentication(to: .unauthenticated, .deviceMismatch, .status)
            authorizationExpiries = [:]
            selectedProviderID = nil
            let notice = Notice.deviceMismatch.report("The stored tokens belong to another device id; they were cleared and the user must log in again.")
            actions.append(.emit(.status(notice), answering: []))
        }
        logoutMark = stored.loggedOut
        _ = adoptStepUps(stored.pendingStepUps)
        let token = usableStoredToken(stored, loaded)
        if let token {
            moveAuthentication(to: .authenticated(token), .validStoredToken)
        } else if let resumed = resumePendingLogin(stored.pendingLogin, loaded) {
            actions.append(resumed)
        } else if let resumed = resumePendingLogout(stored.pendingLogout) {
            actions.append(resumed)
        } else if let resumed = resumeRegistration(stored.pendingRegistration, loaded) {
            actions += resumed
        } else if authentication.kind == .unknown {
            moveAuthentication(to: .unauthenticated, .noValidStoredToken)
        }
        authorizationExpiries = [:]
        selectedProviderID = stored.selectedProvider.flatMap { loaded.mvpd($0) == nil ? nil : $0 }
        return actions + answerSetRequestor(calls)
    }

    /// `setRequestorComplete` for `calls` — now, or once the providers asked at configuration answered.
    private mutating func answerSetRequestor(_ calls: [CallID]) -> [Action] {
        guard !verifyingAtSetRequestor else {
            setRequestorWait?.calls = calls
            return []
        }
        if setRequestorWait != nil { setRequestorWait = nil }
        return [.emit(.setRequestorComplete(success: true), answering: calls)]
    }

    /// Whether a verification the configuration asked for still runs.
    private var verifyingAtSetRequestor: Bool {
        guard let wait = setRequestorWait else { return false }
        return accountWork.values.contains { $0.operation.map(wait.verifications.contains) ?? false }
    }

    /// After each input: answers the `setRequestor` that waited for the providers' verifications once
    /// none of them runs any more (answered, past its deadline, or ended by a sign-out elsewhere).
    mutating func answerSetRequestorIfVerified() -> Action? {
        guard let wait = setRequestorWait, case .configured = configuration, !verifyingAtSetRequestor else { return nil }
        setRequestorWait = nil
        stayConfiguration(.providersVerified, input: .anyInput, .setRequestorComplete, .runQueue)
        return .emit(.setRequestorComplete(success: true), answering: wait.calls)
    }

    // MARK: - Silent sign-in at setRequestor

    /// With nothing valid stored (and no login to resume), signs in without UI before completing:
    /// when another requestor holds an authentication on this device, by reading the device's
    /// profiles (`GET profiles`: single sign-on, or — N001 first — passive authentication for an
    /// MVPD that authenticates per requestor); else with the platform's account when it is signed
    /// in to one of the requestor's SSO-capable MVPDs (partner single sign-on). Empty when there is
    /// nothing to try: a device where nobody signed in has no profile to find.
    private mutating func signInSilently(
        _ loaded: RequestorConfiguration, _ stored: StoredTokens, others: [AuthenticationToken], calls: [CallID]
    ) -> [Action] {
        guard stored.deviceID ?? deviceID == deviceID, usableStoredToken(stored, loaded) == nil,
            !(stored.pendingLogin.map { expiry(of: $0) > now && loaded.mvpd($0.mvpdID) != nil } ?? false),
            !(stored.pendingRegistration.map { $0.expires > now && loaded.mvpd($0.mvpdID) != nil } ?? false)
        else { return [] }
        let sharedLogin = others.first { token in
            token.requestorID != loaded.requestorID && isUsable(token.expires) && token.source != .tempPass
                && loaded.mvpd(token.mvpdID) != nil
        }
        let platformMVPDs = loaded.mvpds.filter(\.enablePlatformServices).map(\.id)
        guard sharedLogin != nil || (settings.platformSSO && !platformMVPDs.isEmpty) else { return [] }
        persisted = stored
        logoutMark = stored.loggedOut
        _ = adoptStepUps(stored.pendingStepUps)
        selectedProviderID = stored.selectedProvider.flatMap { loaded.mvpd($0) == nil ? nil : $0 }
        authorizationExpiries = [:]
        let operation = nextOperation(.configuration)
        guard let sharedLogin, let mvpd = loaded.mvpd(sharedLogin.mvpdID) else {
            moveConfiguration(
                to: .signingIn(loaded, operation: operation, calls: calls), .platformMayBeSignedIn, .requestPartnerSession)
            return [.callBackend(operation, partnerSessionRequest(loaded))]
        }
        let signingIn = ConfigurationState.signingIn(loaded, operation: operation, calls: calls)
        guard mvpd.authenticationPerRequestor else {
            moveConfiguration(to: signingIn, .singleSignOn, .readProfiles)
            return [.callBackend(operation, .profiles(context(loaded)))]
        }
        moveConfiguration(to: signingIn, .passiveAuthentication, .status, .readProfiles)
        let notice = Notice.passiveAuthentication.report("Passive authentication with \(mvpd.displayName) started: it signs in without UI if its session allows.")
        return [
            .emit(.status(notice), answering: []),
            .callBackend(operation, .profiles(context(loaded))),
        ]
    }

    mutating func platformSignInChecked(_ operation: OperationID, _ assertion: PlatformAssertion?) -> [Action] {
        guard case .signingIn(let loaded, let expected, let calls) = configuration, expected == operation else {
            return [.log(.lateResultIgnored(operation))]
        }
        guard let assertion else { return finishSigningIn(loaded, calls: calls, token: nil, .platformNotSignedIn) }
        let exchange = nextOperation(.configuration)
        moveConfiguration(to: .signingIn(loaded, operation: exchange, calls: calls), .platformSignedIn, .readProfile)
        return [
            .callBackend(
                exchange, .partnerProfile(context(loaded), partner: Self.platformPartner, assertion: assertion))
        ]
    }

    /// The silent sign-in's request answered: the partner session (then the platform is asked, its
    /// assertion answering the partner's request), or the read of the device's profiles or of the
    /// platform's partner profile.
    mutating func silentExchangeFinished(
        _ loaded: RequestorConfiguration, calls: [CallID], _ result: Result<BackendResponse, BackendError>
    ) -> [Action] {
        if case .success(.session) = result {
            switch Self.partnerRequest(result) {
            case .success(let request):
                let check = nextOperation(.configuration)
                moveConfiguration(to: .signingIn(loaded, operation: check, calls: calls), .partnerRequest, .checkPlatformSignIn)
                let platformMVPDs = loaded.mvpds.filter(\.enablePlatformServices).map(\.id)
                return [.checkPlatformSignIn(check, requestorID: loaded.requestorID, mvpdIDs: platformMVPDs, request: request)]
            case .failure(let fallback):
                return [.log(.silentSignInFailed("the partner session gave no request (\(fallback.why))"))]
                    + finishSigningIn(loaded, calls: calls, token: nil, fallback.condition)
            }
        }
        switch result {
        case .success(.profiles(let profiles)):
            guard let token = bestProfile(profiles, loaded) else {
                // A normal answer: nobody signed in with an MVPD this requestor may share.
                return [.log(.silentSignInFailed("the device has no valid profile for this requestor"))]
                    + finishSigningIn(loaded, calls: calls, token: nil, .noValidStoredToken)
            }
            return finishSigningIn(loaded, calls: calls, token: token, .profileMatchesFlow)
        case .success:
            return [.log(.silentSignInFailed("the backend's answer is not a profile"))]
                + finishSigningIn(loaded, calls: calls, token: nil, .malformedAnswer)
        case .failure(let error):
            return [.log(.silentSignInFailed(error.summary))] + finishSigningIn(loaded, calls: calls, token: nil, .failed)
        }
    }

    /// Completes `setRequestor` after the silent sign-in: signed in or not, only
    /// `setRequestorComplete` is seen (after N001 for passive authentication), then the held calls run.
    private mutating func finishSigningIn(
        _ loaded: RequestorConfiguration, calls: [CallID], token: AuthenticationToken?, _ condition: TransitionGuard
    ) -> [Action] {
        if !verifyingAtSetRequestor {
            moveConfiguration(to: .configured(loaded), condition, .setRequestorComplete, .runQueue)
        } else {
            moveConfiguration(to: .configured(loaded), .verifyingProviders)
        }
        if let token {
            moveAuthentication(
                to: .authenticated(token), token.source == .platformSSO ? .platformSignedIn : .singleSignOn)
            selectedProviderID = token.mvpdID
        } else {
            moveAuthentication(to: .unauthenticated, .noValidStoredToken)
        }
        return renewalsAfterSilentSignIn() + answerSetRequestor(calls)
    }

    /// The authentication to adopt from a profiles answer: a valid profile of one of the
    /// requestor's MVPDs (not a TempPass: another app's TempPass is not this app's), the remembered
    /// provider's first, else the one that lasts longest (Adobe's *Retrieve profiles*: the application chooses). The
    /// service stamps `notBefore` with its own clock: a device clock behind it must not refuse a
    /// fresh profile, so only `notAfter` is judged (with the leeway).
    func bestProfile(_ profiles: [String: V2Profile], _ loaded: RequestorConfiguration, mvpd only: String? = nil)
        -> AuthenticationToken?
    {
        let tokens = profiles.sorted { $0.key < $1.key }.compactMap { mvpdID, profile -> AuthenticationToken? in
            guard only == nil || only == mvpdID, let mvpd = loaded.mvpd(mvpdID), only != nil || !mvpd.isTempPass,
                let token = AuthenticationToken(profile: profile, mvpdID: mvpdID, requestorID: loaded.requestorID),
                isUsable(token.expires)
            else { return nil }
            return token
        }
        return tokens.first { $0.mvpdID == selectedProviderID } ?? tokens.max { $0.expires < $1.expires }
    }

    /// The stored authentication if it still counts for `loaded`: unexpired, for this requestor,
    /// and from one of its MVPDs.
    func usableStoredToken(_ stored: StoredTokens, _ loaded: RequestorConfiguration) -> AuthenticationToken? {
        stored.authentication.flatMap { token in
            isUsable(token.expires) && token.requestorID == loaded.requestorID && loaded.mvpd(token.mvpdID) != nil
                ? token : nil
        }
    }

    mutating func configurationFailed(_ operation: OperationID, _ error: BackendError) -> [Action] {
        guard case .configuring(let requestorID, let expected, let calls) = configuration, expected == operation else {
            return [.log(.lateResultIgnored(operation))]
        }
        configurationFailures &+= configurationFailures == .max ? 0 : 1
        let retryAt = now.adding(ConfigurationState.retryPause(afterFailures: Int(configurationFailures)))
        moveConfiguration(
            to: .failed(requestorID: requestorID, error, retryAt: retryAt), .current, .status, .setRequestorComplete, .failQueue)
        var actions: [Action] = [
            .emit(.status(Self.configurationStatus(for: error)), answering: []),
            .emit(.setRequestorComplete(success: false), answering: calls),
        ]
        let held = queue
        queue.removeAll()
        for queued in held { actions += failWithoutConfiguration(queued.id, queued.call) }
        return actions
    }

    /// Adobe's `CFG…` status for a failed configuration, with the real HTTP status in it (`CFG503`).
    static func configurationStatus(for error: BackendError) -> StatusReport {
        let status: Int
        switch error.code {
        case .throttled: status = 429
        case .httpStatus where (400...599).contains(error.status ?? 0): status = error.status ?? 400
        case .malformedResponse: status = 500
        case .httpStatus, .denied, .authenticationRequired: status = 400
        default: status = 404  // network, timeout, retry, storage: the configuration could not be had
        }
        return Notice.configurationFailed(status: status).report("setRequestor failed: \(error.summary)")
    }
}
