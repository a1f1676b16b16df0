/// The authentication region: checkAuthentication, getAuthentication, provider selection,
/// the login flow's secrets, deadline and code exchange, and logout.
///
/// Every change of ``authentication`` goes through ``moveAuthentication(to:_:_:)``, which records
/// the transition row; a test holds those rows to the table the charts draw.
extension EntitlementMachine {
    // MARK: - Region accessors

    /// The running login flow, if any.
    var currentLoginFlow: LoginFlow? {
        switch authentication {
        case .platformPicking(let flow), .selectingProvider(let flow), .preparingLogin(let flow),
            .awaitingRedirect(let flow), .requestingCode(let flow, _), .awaitingSecondScreen(let flow, _, _),
            .exchangingCode(let flow, _):
            flow
        default: nil
        }
    }

    /// The running logout, if any.
    var currentLogoutFlow: LogoutFlow? {
        switch authentication {
        case .preparingLogout(let flow), .loggingOut(let flow): flow
        default: nil
        }
    }

    /// Adds `id` to the running login's waiters (a self-transition with `join`).
    mutating func joinLogin(_ id: CallID) {
        switch authentication {
        case .platformPicking(var flow):
            flow.waiters.append(id)
            moveAuthentication(to: .platformPicking(flow), nil, .join)
        case .selectingProvider(var flow):
            flow.waiters.append(id)
            moveAuthentication(to: .selectingProvider(flow), nil, .join)
        case .preparingLogin(var flow):
            flow.waiters.append(id)
            moveAuthentication(to: .preparingLogin(flow), nil, .join)
        case .awaitingRedirect(var flow):
            flow.waiters.append(id)
            moveAuthentication(to: .awaitingRedirect(flow), nil, .join)
        case .exchangingCode(var flow, let operation):
            flow.waiters.append(id)
            moveAuthentication(to: .exchangingCode(flow, operation: operation), nil, .join)
        case .requestingCode(var flow, let operation):
            flow.waiters.append(id)
            moveAuthentication(to: .requestingCode(flow, operation: operation), nil, .join)
        case .awaitingSecondScreen(var flow, let code, let poll):
            flow.waiters.append(id)
            moveAuthentication(to: .awaitingSecondScreen(flow, code, poll: poll), nil, .join)
        case .unknown, .unauthenticated, .authenticated, .preparingLogout, .loggingOut:
            break
        }
    }

    /// The provider the user is logging in with, is authenticated with, or chose last.
    func currentProvider(_ configuration: RequestorConfiguration) -> MVPD? {
        if let mvpd = currentLoginFlow?.mvpd { return mvpd }
        if case .authenticated(let token) = authentication { return configuration.mvpd(token.mvpdID) }
        return selectedProviderID.flatMap(configuration.mvpd)
    }

    /// Drops an authentication whose expiry has passed (noticed before every call: the row's
    /// input is `authenticationExpired`).
    mutating func expireAuthenticationIfNeeded(_ configuration: RequestorConfiguration) -> [Action] {
        guard case .authenticated(let token) = authentication, !isUsable(token.expires) else { return [] }
        let call = inputName
        inputName = "authenticationExpired"
        defer { inputName = call }
        authorizationCache = [:]
        guard token.source == .tempPass else {
            moveAuthentication(to: .unauthenticated, nil, .persist)
            return []
        }
        // TempPass over: say so (N111) and forget the pseudo-MVPD, so the next login shows the picker.
        moveAuthentication(to: .unauthenticated, .tempPass, .status, .persist)
        selectedProviderID = nil
        let notice = StatusReport(
            code: "N111", level: .warning, message: "The TempPass expired; sign in with a TV provider to keep watching.")
        return [.emit(.status(notice), answering: [])]
    }

    // MARK: - checkAuthentication / getAuthentication

    /// Local state only, no backend call: 1 with `""` or 0 with `USER_NOT_AUTHENTICATED_ERROR`.
    mutating func checkAuthentication(_ id: CallID) -> [Action] {
        recordCall(.localAnswer, .setAuthenticationStatus)
        if case .authenticated(let token) = authentication {
            return authenticationStatus(1, ErrorCode.userAuthenticated, answering: [id], token: token, cached: true)
        }
        return authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: [id])
    }

    mutating func getAuthentication(
        _ id: CallID, force: Bool, data: [String: String], _ configuration: RequestorConfiguration
    ) -> [Action] {
        switch authentication {
        case .authenticated(let token) where !force:
            moveAuthentication(to: authentication, .notForced, .setAuthenticationStatus)
            return authenticationStatus(1, ErrorCode.userAuthenticated, answering: [id], token: token, cached: true)
        case .authenticated:
            // Forced: the cached authentication is discarded and a new login runs.
            moveAuthentication(to: .unauthenticated, .forced, .persist)
            authorizationCache = [:]
            return startLogin(waiters: [id], data: data, configuration)
        case .unknown, .unauthenticated:
            return startLogin(waiters: [id], data: data, configuration)
        case .platformPicking, .selectingProvider, .preparingLogin, .awaitingRedirect, .requestingCode,
            .awaitingSecondScreen, .exchangingCode:
            joinLogin(id)
            return [.log(.joined(id, flow: "the running login"))]
        case .preparingLogout, .loggingOut:
            moveAuthentication(to: authentication, .logoutInProgress, .status)
            return refuse(id, .logoutInProgress)
        }
    }

    /// Starts a login: straight to the remembered provider; else the platform's picker when the
    /// device has one and the requestor has MVPDs that support it (cookbook D); else the provider dialog.
    mutating func startLogin(waiters: [CallID], data: [String: String], _ configuration: RequestorConfiguration)
        -> [Action]
    {
        var flow = LoginFlow(id: nextFlow(), mvpd: nil, secrets: nil, deadline: nil, waiters: waiters, data: data)
        if let remembered = selectedProviderID.flatMap(configuration.mvpd), !remembered.isTempPass {
            flow.mvpd = remembered
            moveAuthentication(to: .preparingLogin(flow), .rememberedProvider, .drawSecrets)
            return [.drawFlowSecrets(flow.id, verifier: true)]
        }
        if settings.platformSSO, configuration.mvpds.contains(where: \.enablePlatformServices) {
            moveAuthentication(to: .platformPicking(flow), .platformProviders, .presentTvProviderDialog)
            let dialog = platformDialog(flow, configuration)
            return [
                .emit(.presentTvProviderDialog(dialog), answering: []),
                .presentPlatformPicker(flow.id, dialog, requestorID: configuration.requestorID),
            ]
        }
        moveAuthentication(to: .selectingProvider(flow), .noRememberedProvider, .displayProviderDialog)
        return [.emit(.displayProviderDialog(configuration.mvpds), answering: [])]
    }

    // MARK: - setSelectedProvider

    mutating func setSelectedProvider(_ id: CallID, _ providerID: String?, _ configuration: RequestorConfiguration)
        -> [Action]
    {
        guard let providerID else { return cancelSelection(id, configuration) }
        guard let mvpd = configuration.mvpd(providerID) else {
            recordCall(.unknownProvider, .status)
            return refuse(id, .unknownProvider(providerID))
        }
        var running: LoginFlow?
        var actions: [Action] = []
        var cancelsTimer = false
        switch authentication {
        case .authenticated:
            moveAuthentication(to: authentication, .authenticated, .status)
            return refuse(id, .alreadyAuthenticated)
        case .exchangingCode:
            moveAuthentication(to: authentication, .codeExchangeInProgress, .status)
            return refuse(id, .codeExchangeInProgress)
        case .preparingLogout, .loggingOut:
            moveAuthentication(to: authentication, .logoutInProgress, .status)
            return refuse(id, .logoutInProgress)
        case .unknown, .unauthenticated:
            running = nil
        case .selectingProvider(let flow), .preparingLogin(let flow), .requestingCode(let flow, _):
            running = flow
        case .awaitingSecondScreen(let flow, _, _):
            // Chosen again on the TV: the old code is no longer polled.
            running = flow
            cancelsTimer = true
            actions += secondScreenTimers(flow).map(Action.cancelTimer)
        case .platformPicking(let flow):
            // The app chose in its own UI: the platform's picker is no longer waited for.
            running = flow
            actions += [
                .dismissPlatformPicker(flow.id), .emit(.dismissTvProviderDialog(platformDialog(flow, configuration)), answering: []),
            ]
        case .awaitingRedirect(let flow):
            // The user went back and chose again: the old state and deadline die with the old attempt.
            running = flow
            cancelsTimer = true
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
        }
        // Every attempt gets a new flow id, so anything still addressed to the old attempt is late.
        let flow = LoginFlow(
            id: nextFlow(), mvpd: mvpd, secrets: nil, deadline: nil, waiters: (running?.waiters ?? []) + [id],
            data: running?.data ?? [:])
        selectedProviderID = mvpd.id
        let tracking = [mvpd.id, settings.deviceType, settings.clientType, settings.operatingSystem]
        if mvpd.isTempPass {
            // No login page: the backend grants (or resumes) this device's TempPass at once.
            var rowActions: [TransitionAction] = cancelsTimer ? [.cancelTimer] : []
            if case .platformPicking = authentication { rowActions.append(.dismissTvProviderDialog) }
            let operation = nextOperation()
            moveAuthentication(
                to: .exchangingCode(flow, operation: operation), .tempPass, rowActions + [.trackSelection, .persist, .exchangeCode])
            return actions + [
                .emit(.sendTrackingData(.mvpdSelection, tracking), answering: []),
                .callBackend(operation, .startTempPass(context(configuration), mvpdID: mvpd.id, data: flow.data)),
            ]
        }
        if cancelsTimer {
            moveAuthentication(to: .preparingLogin(flow), nil, .cancelTimer, .trackSelection, .persist, .drawSecrets)
        } else if case .platformPicking = authentication {
            moveAuthentication(to: .preparingLogin(flow), nil, .dismissTvProviderDialog, .trackSelection, .persist, .drawSecrets)
        } else {
            moveAuthentication(to: .preparingLogin(flow), nil, .trackSelection, .persist, .drawSecrets)
        }
        actions += [
            .emit(.sendTrackingData(.mvpdSelection, tracking), answering: []),
            .drawFlowSecrets(flow.id, verifier: true),
        ]
        return actions
    }

    /// `setSelectedProvider(nil)`: cancel whatever runs; always answered by `setAuthenticationStatus`.
    private mutating func cancelSelection(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        if let logout = currentLogoutFlow { return finishLogout(logout, alsoAnswering: [id], condition: .cancelled) }
        if let flow = currentLoginFlow {
            selectedProviderID = nil
            return endLogin(flow, code: ErrorCode.providerNotSelected, reason: "The user cancelled the login.",
                    alsoAnswering: [id], persists: true, condition: .cancelled)
        }
        var actions: [Action] = []
        if case .authenticated = authentication {
            // Signs this requestor out locally (no web logout), as AccessEnabler does.
            authorizationCache = [:]
            actions += abortRequests(code: ErrorCode.userNotAuthenticated, description: "The user signed out.")
        }
        moveAuthentication(to: .unauthenticated, .cancelled, .persist, .setAuthenticationStatus)
        selectedProviderID = nil
        return actions + authenticationStatus(0, ErrorCode.providerNotSelected, answering: [id])
    }

    // MARK: - Flow secrets, deadline, code exchange

    mutating func flowSecretsDrawn(_ flowID: FlowID, _ secrets: FlowSecrets) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [.log(.lateSecretsIgnored(flowID))] }
        let deadline = now.adding(settings.redirectTimeout)
        switch authentication {
        case .preparingLogin(let flow) where flow.id == flowID && settings.secondScreen != nil:
            return requestRegistrationCode(flow, configuration)
        case .preparingLogin(var flow) where flow.id == flowID:
            // A prepared login always has its MVPD and asked for a verifier; anything else is not for it.
            guard let mvpd = flow.mvpd, let verifier = secrets.verifier else { return [.log(.lateSecretsIgnored(flowID))] }
            flow.secrets = secrets
            flow.deadline = deadline
            moveAuthentication(to: .awaitingRedirect(flow), nil, .startTimer, .navigateToUrl)
            let url = PercentEncoding.url(
                configuration.authenticationEndpoint,
                query: [
                    ("requestor_id", configuration.requestorID), ("mso_id", mvpd.id), ("device_id", deviceID),
                    ("redirect_uri", settings.redirectURL), ("state", secrets.state),
                    ("code_challenge", PKCE.challenge(for: verifier)), ("code_challenge_method", PKCE.method),
                ])
            return [.startTimer(.redirectDeadline(flowID), at: deadline), .emit(.navigateToUrl(url), answering: [])]
        case .preparingLogout(var flow) where flow.id == flowID:
            flow.secrets = secrets
            flow.deadline = deadline
            moveAuthentication(to: .loggingOut(flow), nil, .startTimer, .navigateToUrl)
            let url = PercentEncoding.url(
                configuration.logoutEndpoint,
                query: [
                    ("requestor_id", configuration.requestorID), ("device_id", deviceID),
                    ("redirect_uri", settings.redirectURL), ("state", secrets.state),
                ])
            return [.startTimer(.redirectDeadline(flowID), at: deadline), .emit(.navigateToUrl(url), answering: [])]
        default:
            return [.log(.lateSecretsIgnored(flowID))]
        }
    }

    mutating func timerFired(_ timer: TimerID) -> [Action] {
        switch (timer, authentication) {
        case (.registrationPoll(let flowID), .awaitingSecondScreen(let flow, let code, nil)) where flow.id == flowID:
            return pollRegistration(flow, code)
        case (.registrationExpiry(let flowID), .awaitingSecondScreen(let flow, _, _)) where flow.id == flowID:
            let notice = StatusReport(
                code: "REGCODE_EXPIRED", level: .warning, message: "The registration code expired before it was used.")
            return [.emit(.status(notice), answering: [])]
                + endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The registration code expired.", notice: true,
                    condition: .codeExpired)
        case (.redirectDeadline(let flowID), .awaitingRedirect(let flow)) where flow.id == flowID:
            return expireLogin(flow)
        case (.redirectDeadline(let flowID), .loggingOut(let flow)) where flow.id == flowID:
            let notice = StatusReport(
                code: "LOGOUT_TIMED_OUT", level: .warning,
                message: "The logout redirect did not come back in time; local tokens were already cleared.")
            return [.emit(.status(notice), answering: [])] + finishLogout(flow, alsoAnswering: [], notice: true)
        default:
            return [.log(.lateTimerIgnored(timer))]
        }
    }

    /// The login passed its deadline: remember its state (a late redirect is refused as `expired`) and end it.
    mutating func expireLogin(_ flow: LoginFlow, condition: TransitionGuard? = nil) -> [Action] {
        expiredFlowState = flow.secrets?.state
        let notice = StatusReport(
            code: "LOGIN_EXPIRED", level: .warning, message: "The login expired before the provider redirected back.")
        return [.emit(.status(notice), answering: [])]
            + endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The login expired.", notice: true,
                condition: condition)
    }

    mutating func codeExchangeFinished(
        _ flow: LoginFlow, _ result: Result<BackendResponse, BackendError>, _ configuration: RequestorConfiguration
    ) -> [Action] {
        let failure: String
        switch result {
        case .success(.authenticated(let token))
        where token.mvpdID == flow.mvpd?.id && token.requestorID == configuration.requestorID && token.expires > now:
            selectedProviderID = token.mvpdID
            var notice: [Action] = []
            if token.source == .tempPass {
                moveAuthentication(to: .authenticated(token), .tempPass, .status, .persist, .setAuthenticationStatus)
                let minutes = token.expires.milliseconds(since: now) / 60_000
                let left = "Signed in with TempPass: \(minutes) minutes left."
                notice = [.emit(.status(StatusReport(code: "N011", level: .info, message: left)), answering: [])]
            } else {
                moveAuthentication(to: .authenticated(token), .tokenMatchesFlow, .persist, .setAuthenticationStatus)
            }
            return notice + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        case .success:
            failure = "malformed backend response: the authentication token does not match the flow"
        case .failure(let error):
            failure = error.summary
        }
        // Named for what was exchanged: a TempPass request, a platform assertion (no secrets drawn), or a code.
        let what = flow.mvpd?.isTempPass == true ? "The TempPass request" : flow.secrets == nil ? "The platform sign-in" : "The code exchange"
        let notice = StatusReport(code: "LOGIN_FAILED", level: .error, message: "\(what) failed: \(failure).")
        return [.emit(.status(notice), answering: [])]
            + endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The login failed: \(failure).",
                notice: true, condition: result.isSuccess ? .malformedAnswer : .failed)
    }

    /// Ends a login without authentication: one `setAuthenticationStatus(0, code)` for all its
    /// waiters, then a `tokenRequestFailed` for every authorization that waited for it.
    mutating func endLogin(
        _ flow: LoginFlow, code: String, reason: String, alsoAnswering: [CallID] = [], notice: Bool = false,
        persists: Bool = false, condition: TransitionGuard? = nil
    ) -> [Action] {
        var actions: [Action] = []
        var rowActions: [TransitionAction] = notice ? [.status] : []
        if case .awaitingRedirect = authentication {
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
            rowActions.append(.cancelTimer)
        }
        if case .awaitingSecondScreen = authentication {
            actions += secondScreenTimers(flow).map(Action.cancelTimer)
            rowActions.append(.cancelTimer)
        }
        if case .platformPicking = authentication, case .configured(let configuration) = configuration {
            // The engine stops waiting for the picker, and the app closes it (cookbook: on cancel too).
            actions += [
                .dismissPlatformPicker(flow.id), .emit(.dismissTvProviderDialog(platformDialog(flow, configuration)), answering: []),
            ]
            rowActions.append(.dismissTvProviderDialog)
        }
        if persists { rowActions.append(.persist) }
        rowActions.append(.setAuthenticationStatus)
        moveAuthentication(to: .unauthenticated, condition, rowActions)
        actions += authenticationStatus(0, code, answering: flow.waiters + alsoAnswering)
        let waiting = authorizations.filter { $0.phase == .waitingForAuthentication }
        authorizations.removeAll { $0.phase == .waitingForAuthentication }
        for request in waiting {
            recordAuthorization(from: .waitingForAuthentication, to: .idle, nil, .tokenRequestFailed)
            actions += authorizationFailed(
                request.resource, ErrorCode.userNotAuthenticated, reason, answering: request.waiters)
        }
        return actions
    }

    // MARK: - Shared storage

    /// Whether storage holds something else than this machine last saved or read (another
    /// instance logged in or out, started or took a login, cached an authorization): the engine
    /// then feeds ``Input/storageChanged(_:)``. The engine asks only when the stored version changed.
    public func differs(from stored: StoredTokens) -> Bool {
        guard case .configured = configuration else { return false }
        return stored != persisted
    }

    /// Resumes a login another instance (or this one before a restart) started: its state,
    /// verifier, MVPD and deadline come from storage; nobody here waits for it yet.
    mutating func resumePendingLogin(_ pending: PendingLogin?, _ configuration: RequestorConfiguration) -> Action? {
        guard let pending, pending.deadline > now, let mvpd = configuration.mvpd(pending.mvpdID) else { return nil }
        let flow = LoginFlow(
            id: nextFlow(), mvpd: mvpd, secrets: FlowSecrets(state: pending.state, verifier: pending.verifier),
            deadline: pending.deadline, waiters: [], data: pending.data)
        moveAuthentication(to: .awaitingRedirect(flow), .pendingLogin, .startTimer)
        selectedProviderID = mvpd.id
        return .startTimer(.redirectDeadline(flow.id), at: pending.deadline)
    }

    /// Another instance sharing the storage changed the authentication: adopt it where this
    /// instance is idle, or where it was waiting for a redirect that the other one received.
    mutating func storageChanged(_ stored: StoredTokens) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [] }
        let mine = storedTokens
        persisted = stored
        let token = usableStoredToken(stored, configuration)
        func adopt() {
            authorizationCache = token == nil ? [:] : stored.authorizations.filter { isUsable($0.value.expires) }
            selectedProviderID = stored.selectedProvider.flatMap { configuration.mvpd($0) == nil ? nil : $0 }
        }
        switch authentication {
        case .unauthenticated:
            if let token {
                moveAuthentication(to: .authenticated(token), .validStoredToken)
                adopt()
            } else if let resumed = resumePendingLogin(stored.pendingLogin, configuration) {
                return [resumed]
            }
            return []
        case .authenticated(let current):
            if let token {
                guard token != current else {
                    // The same login: keep every authorization either instance cached.
                    for (resource, authorization) in stored.authorizations where isUsable(authorization.expires) {
                        if let existing = authorizationCache[resource], existing.expires >= authorization.expires { continue }
                        authorizationCache[resource] = authorization
                    }
                    return []
                }
                moveAuthentication(to: .authenticated(token), .validStoredToken)
            } else {
                moveAuthentication(to: .unauthenticated, .noValidStoredToken)
            }
            adopt()
            return []
        case .awaitingRedirect(var flow):
            guard let token else {
                guard let secrets = flow.secrets, stored.pendingLogin?.state != secrets.state else { return [] }
                if let pending = stored.pendingLogin, pending.deadline > now, let mvpd = configuration.mvpd(pending.mvpdID) {
                    // Another instance restarted the login: wait for that one, with its secrets and deadline.
                    flow.mvpd = mvpd
                    flow.secrets = FlowSecrets(state: pending.state, verifier: pending.verifier)
                    flow.deadline = pending.deadline
                    flow.data = pending.data
                    moveAuthentication(to: .awaitingRedirect(flow), .pendingLogin, .cancelTimer, .startTimer)
                    return [.cancelTimer(.redirectDeadline(flow.id)), .startTimer(.redirectDeadline(flow.id), at: pending.deadline)]
                }
                // Another instance took the redirect (or ended the login): it completes the login and
                // this one waits for the outcome in storage until its deadline, without the secrets,
                // so the same redirect can never complete the login here too.
                flow.secrets = nil
                moveAuthentication(to: .awaitingRedirect(flow), .pendingLoginTaken)
                return []
            }
            moveAuthentication(to: .authenticated(token), .validStoredToken, .cancelTimer, .setAuthenticationStatus)
            adopt()
            return [.cancelTimer(.redirectDeadline(flow.id))]
                + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        default:
            // In the middle of its own flow this instance keeps its view until the flow ends.
            persisted = mine
            return []
        }
    }

    // MARK: - Logout

    /// Clears local tokens first, then sends the logout URL; the logout redirect (or the deadline) completes it.
    mutating func logout(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        var actions: [Action] = []
        switch authentication {
        case .preparingLogout(var flow):
            flow.waiters.append(id)
            moveAuthentication(to: .preparingLogout(flow), nil, .join)
            return [.log(.joined(id, flow: "the running logout"))]
        case .loggingOut(var flow):
            flow.waiters.append(id)
            moveAuthentication(to: .loggingOut(flow), nil, .join)
            return [.log(.joined(id, flow: "the running logout"))]
        case .platformPicking(let flow), .selectingProvider(let flow), .preparingLogin(let flow),
            .awaitingRedirect(let flow), .requestingCode(let flow, _), .awaitingSecondScreen(let flow, _, _),
            .exchangingCode(let flow, _):
            actions += endLogin(flow, code: ErrorCode.userNotAuthenticated, reason: "The login was abandoned by logout.")
        case .unknown, .unauthenticated, .authenticated:
            break
        }
        actions += abortRequests(code: ErrorCode.userNotAuthenticated, description: "The user logged out.")
        authorizationCache = [:]
        selectedProviderID = nil
        let flow = LogoutFlow(id: nextFlow(), secrets: nil, deadline: nil, waiters: [id])
        if case .authenticated(let token) = authentication, token.source == .platformSSO {
            // Cookbook I: this app is signed out, the platform is not; say so (VSA203).
            moveAuthentication(to: .preparingLogout(flow), .platformSession, .status, .persist, .drawSecrets)
            let notice = StatusReport(
                code: "VSA203", level: .info,
                message: "Signed out of this app only: the device is still signed in to the TV provider; "
                    + "sign out in the device settings too, or this app signs in again at its next setRequestor.")
            actions += [.emit(.status(notice), answering: []), .drawFlowSecrets(flow.id, verifier: false)]
            return actions
        }
        moveAuthentication(to: .preparingLogout(flow), nil, .persist, .drawSecrets)
        actions.append(.drawFlowSecrets(flow.id, verifier: false))
        return actions
    }

    /// Completes a logout: `setAuthenticationStatus(0, USER_NOT_AUTHENTICATED_ERROR)` for all its waiters.
    mutating func finishLogout(
        _ flow: LogoutFlow, alsoAnswering: [CallID], notice: Bool = false, condition: TransitionGuard? = nil
    ) -> [Action] {
        var actions: [Action] = []
        var rowActions: [TransitionAction] = notice ? [.status] : []
        if case .loggingOut = authentication {
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
            rowActions.append(.cancelTimer)
        }
        rowActions.append(.setAuthenticationStatus)
        moveAuthentication(to: .unauthenticated, condition, rowActions)
        return actions + authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: flow.waiters + alsoAnswering)
    }
}

extension Result {
    /// True for `.success`.
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
