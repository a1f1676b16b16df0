/// The authentication region: checkAuthentication, getAuthentication, provider selection,
/// the login flow's secrets, deadline and code exchange, and logout.
extension EntitlementMachine {
    // MARK: - Region accessors

    /// The running login flow, if any.
    var currentLoginFlow: LoginFlow? {
        switch authentication {
        case .selectingProvider(let flow), .preparingLogin(let flow), .awaitingRedirect(let flow),
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

    /// Adds `id` to the running login's waiters (no effect when no login runs).
    mutating func joinLogin(_ id: CallID) {
        switch authentication {
        case .selectingProvider(var flow):
            flow.waiters.append(id)
            authentication = .selectingProvider(flow)
        case .preparingLogin(var flow):
            flow.waiters.append(id)
            authentication = .preparingLogin(flow)
        case .awaitingRedirect(var flow):
            flow.waiters.append(id)
            authentication = .awaitingRedirect(flow)
        case .exchangingCode(var flow, let operation):
            flow.waiters.append(id)
            authentication = .exchangingCode(flow, operation: operation)
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

    /// Drops an authentication whose expiry has passed (checked before every call).
    mutating func expireAuthenticationIfNeeded(_ configuration: RequestorConfiguration) -> [Action] {
        guard case .authenticated(let token) = authentication, token.expires <= now else { return [] }
        authentication = .unauthenticated
        authorizationCache = [:]
        return [persist(configuration)]
    }

    // MARK: - checkAuthentication / getAuthentication

    /// Local state only, no backend call: 1 with `""` or 0 with `USER_NOT_AUTHENTICATED_ERROR`.
    mutating func checkAuthentication(_ id: CallID) -> [Action] {
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
            return authenticationStatus(1, ErrorCode.userAuthenticated, answering: [id], token: token, cached: true)
        case .authenticated:
            // Forced: the cached authentication is discarded and a new login runs.
            authentication = .unauthenticated
            authorizationCache = [:]
            return [persist(configuration)] + startLogin(waiters: [id], data: data, configuration)
        case .unknown, .unauthenticated:
            return startLogin(waiters: [id], data: data, configuration)
        case .selectingProvider, .preparingLogin, .awaitingRedirect, .exchangingCode:
            joinLogin(id)
            return [.log(.joined(id, flow: "the running login"))]
        case .preparingLogout, .loggingOut:
            return refuse(id, .logoutInProgress)
        }
    }

    /// Starts a login: straight to the remembered provider, else the provider dialog.
    mutating func startLogin(waiters: [CallID], data: [String: String], _ configuration: RequestorConfiguration)
        -> [Action]
    {
        var flow = LoginFlow(id: nextFlow(), mvpd: nil, secrets: nil, deadline: nil, waiters: waiters, data: data)
        if let remembered = selectedProviderID.flatMap(configuration.mvpd) {
            flow.mvpd = remembered
            authentication = .preparingLogin(flow)
            return [.drawFlowSecrets(flow.id, verifier: true)]
        }
        authentication = .selectingProvider(flow)
        return [.emit(.displayProviderDialog(configuration.mvpds), answering: [])]
    }

    // MARK: - setSelectedProvider

    mutating func setSelectedProvider(_ id: CallID, _ providerID: String?, _ configuration: RequestorConfiguration)
        -> [Action]
    {
        guard let providerID else { return cancelSelection(id, configuration) }
        guard let mvpd = configuration.mvpd(providerID) else { return refuse(id, .unknownProvider(providerID)) }
        var running: LoginFlow?
        var actions: [Action] = []
        switch authentication {
        case .authenticated: return refuse(id, .alreadyAuthenticated)
        case .exchangingCode: return refuse(id, .codeExchangeInProgress)
        case .preparingLogout, .loggingOut: return refuse(id, .logoutInProgress)
        case .unknown, .unauthenticated:
            running = nil
        case .selectingProvider(let flow), .preparingLogin(let flow):
            running = flow
        case .awaitingRedirect(let flow):
            // The user went back and chose again: the old state and deadline die with the old attempt.
            running = flow
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
        }
        // Every attempt gets a new flow id, so anything still addressed to the old attempt is late.
        let flow = LoginFlow(
            id: nextFlow(), mvpd: mvpd, secrets: nil, deadline: nil, waiters: (running?.waiters ?? []) + [id],
            data: running?.data ?? [:])
        selectedProviderID = mvpd.id
        authentication = .preparingLogin(flow)
        let tracking = [mvpd.id, settings.deviceType, settings.clientType, settings.operatingSystem]
        actions += [
            .emit(.sendTrackingData(.mvpdSelection, tracking), answering: []),
            persist(configuration),
            .drawFlowSecrets(flow.id, verifier: true),
        ]
        return actions
    }

    /// `setSelectedProvider(nil)`: cancel whatever runs; always answered by `setAuthenticationStatus`.
    private mutating func cancelSelection(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        if let logout = currentLogoutFlow { return finishLogout(logout, alsoAnswering: [id]) }
        var actions: [Action] = []
        let flow = currentLoginFlow
        if case .authenticated = authentication {
            // Signs this requestor out locally (no web logout), as AccessEnabler does.
            authentication = .unauthenticated
            authorizationCache = [:]
            actions += abortRequests(code: ErrorCode.userNotAuthenticated, description: "The user signed out.")
        }
        selectedProviderID = nil
        actions.append(persist(configuration))
        if let flow {
            return actions
                + endLogin(flow, code: ErrorCode.providerNotSelected, reason: "The user cancelled the login.",
                    alsoAnswering: [id])
        }
        return actions + authenticationStatus(0, ErrorCode.providerNotSelected, answering: [id])
    }

    // MARK: - Flow secrets, deadline, code exchange

    mutating func flowSecretsDrawn(_ flowID: FlowID, _ secrets: FlowSecrets) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [.log(.lateSecretsIgnored(flowID))] }
        let deadline = now.adding(settings.redirectTimeout)
        switch authentication {
        case .preparingLogin(var flow) where flow.id == flowID:
            // A prepared login always has its MVPD and asked for a verifier; anything else is not for it.
            guard let mvpd = flow.mvpd, let verifier = secrets.verifier else { return [.log(.lateSecretsIgnored(flowID))] }
            flow.secrets = secrets
            flow.deadline = deadline
            authentication = .awaitingRedirect(flow)
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
            authentication = .loggingOut(flow)
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
        case (.redirectDeadline(let flowID), .awaitingRedirect(let flow)) where flow.id == flowID:
            return expireLogin(flow)
        case (.redirectDeadline(let flowID), .loggingOut(let flow)) where flow.id == flowID:
            let notice = StatusReport(
                code: "LOGOUT_TIMED_OUT", level: .warning,
                message: "The logout redirect did not come back in time; local tokens were already cleared.")
            return [.emit(.status(notice), answering: [])] + finishLogout(flow, alsoAnswering: [])
        default:
            return [.log(.lateTimerIgnored(timer))]
        }
    }

    /// The login passed its deadline: remember its state (a late redirect is refused as `expired`) and end it.
    mutating func expireLogin(_ flow: LoginFlow) -> [Action] {
        expiredFlowState = flow.secrets?.state
        let notice = StatusReport(
            code: "LOGIN_EXPIRED", level: .warning, message: "The login expired before the provider redirected back.")
        return [.emit(.status(notice), answering: [])]
            + endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The login expired.")
    }

    mutating func codeExchangeFinished(
        _ flow: LoginFlow, _ result: Result<BackendResponse, BackendError>, _ configuration: RequestorConfiguration
    ) -> [Action] {
        let failure: String
        switch result {
        case .success(.authenticated(let token))
        where token.mvpdID == flow.mvpd?.id && token.requestorID == configuration.requestorID && token.expires > now:
            authentication = .authenticated(token)
            selectedProviderID = token.mvpdID
            return [persist(configuration)]
                + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        case .success:
            failure = "malformed backend response: the authentication token does not match the flow"
        case .failure(let error):
            failure = error.summary
        }
        let notice = StatusReport(code: "LOGIN_FAILED", level: .error, message: "The code exchange failed: \(failure).")
        return [.emit(.status(notice), answering: [])]
            + endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The login failed: \(failure).")
    }

    /// Ends a login without authentication: one `setAuthenticationStatus(0, code)` for all its
    /// waiters, then a `tokenRequestFailed` for every authorization that waited for it.
    mutating func endLogin(_ flow: LoginFlow, code: String, reason: String, alsoAnswering: [CallID] = []) -> [Action] {
        var actions: [Action] = []
        if case .awaitingRedirect = authentication { actions.append(.cancelTimer(.redirectDeadline(flow.id))) }
        authentication = .unauthenticated
        actions += authenticationStatus(0, code, answering: flow.waiters + alsoAnswering)
        let waiting = authorizations.filter { $0.phase == .waitingForAuthentication }
        authorizations.removeAll { $0.phase == .waitingForAuthentication }
        for request in waiting {
            actions += authorizationFailed(
                request.resource, ErrorCode.userNotAuthenticated, reason, answering: request.waiters)
        }
        return actions
    }

    // MARK: - Logout

    /// Clears local tokens first, then sends the logout URL; the logout redirect (or the deadline) completes it.
    mutating func logout(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        var actions: [Action] = []
        switch authentication {
        case .preparingLogout(var flow):
            flow.waiters.append(id)
            authentication = .preparingLogout(flow)
            return [.log(.joined(id, flow: "the running logout"))]
        case .loggingOut(var flow):
            flow.waiters.append(id)
            authentication = .loggingOut(flow)
            return [.log(.joined(id, flow: "the running logout"))]
        case .selectingProvider(let flow), .preparingLogin(let flow), .awaitingRedirect(let flow),
            .exchangingCode(let flow, _):
            actions += endLogin(flow, code: ErrorCode.userNotAuthenticated, reason: "The login was abandoned by logout.")
        case .unknown, .unauthenticated, .authenticated:
            break
        }
        actions += abortRequests(code: ErrorCode.userNotAuthenticated, description: "The user logged out.")
        authentication = .unauthenticated
        authorizationCache = [:]
        selectedProviderID = nil
        actions.append(persist(configuration))
        let flow = LogoutFlow(id: nextFlow(), secrets: nil, deadline: nil, waiters: [id])
        authentication = .preparingLogout(flow)
        actions.append(.drawFlowSecrets(flow.id, verifier: false))
        return actions
    }

    /// Completes a logout: `setAuthenticationStatus(0, USER_NOT_AUTHENTICATED_ERROR)` for all its waiters.
    mutating func finishLogout(_ flow: LogoutFlow, alsoAnswering: [CallID]) -> [Action] {
        var actions: [Action] = []
        if case .loggingOut = authentication { actions.append(.cancelTimer(.redirectDeadline(flow.id))) }
        authentication = .unauthenticated
        return actions + authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: flow.waiters + alsoAnswering)
    }
}
