/// The authentication region's logout: local tokens cleared first, the service's logout, and the
/// MVPD's logout redirect chain when it is interactive.
extension EntitlementMachine {
    /// Clears local tokens first, then asks the service to log out (`GET logout/{mvpd}`); an
    /// interactive answer sends the MVPD's logout URL and its redirect (or the deadline) completes
    /// the logout; any other answer completes it at once. With no authentication there is nothing
    /// to log out on the service, and the logout completes at once.
    mutating func logout(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        var actions: [Action] = []
        // The MVPD to log out of on the service: the authentication's, or that of a login whose
        // session exists (its profile may already be saved there).
        var mvpdID: String?
        if case .authenticated(let token) = authentication { mvpdID = token.mvpdID }
        if let flow = currentLoginFlow, flow.code != nil { mvpdID = flow.mvpd?.id }
        let platformSession = if case .authenticated(let token) = authentication { token.source == .platformSSO } else { false }
        switch authentication {
        case .logout(var flow, let step):
            flow.waiters.append(id)
            moveAuthentication(to: .logout(flow, step), nil, .join)
            return [.log(.joined(id, flow: "the running logout"))]
        case .login(let flow, _):
            actions += endLogin(flow, code: ErrorCode.userNotAuthenticated, reason: "The login was abandoned by logout.")
        case .unknown, .unauthenticated, .authenticated:
            break
        }
        actions += abortRequests(code: ErrorCode.userNotAuthenticated, description: "The user logged out.")
        endStepUps(.failed(code: ErrorCode.userNotAuthenticated, description: "The user logged out."))
        authorizationExpiries = [:]
        selectedProviderID = nil
        markLogout()
        guard let mvpdID else {
            moveAuthentication(to: .unauthenticated, .notAuthenticated, .setAuthenticationStatus)
            return actions + authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: [id])
        }
        let flow = LogoutFlow(id: nextFlow(), secrets: nil, deadline: nil, mvpdID: mvpdID, waiters: [id])
        if platformSession {
            // Cookbook I: this app is signed out, the platform is not; say so (VSA203).
            moveAuthentication(to: .logout(flow, .preparingLogout), .platformSession, .status, .drawSecrets)
            let notice = Notice.platformLogout.report("Signed out of this app only: the device is still signed in to the TV provider; "
                    + "sign out in the device settings too, or this app signs in again at its next setRequestor.")
            actions.append(.emit(.status(notice), answering: []))
            return actions
        }
        moveAuthentication(to: .logout(flow, .preparingLogout), nil, .drawSecrets)
        return actions
    }

    /// The service logged out: follow an interactive MVPD logout when the device has a web view,
    /// else the logout is complete (`complete`, `invalid`, `partner_logout`, or no web view). A
    /// failed request completes it too: the local tokens are already gone, and the app is told.
    mutating func logoutAnswered(_ flow: LogoutFlow, _ result: Result<BackendResponse, BackendError>) -> [Action] {
        if let pending = newerLoginStored(), case .configured(let configuration) = configuration {
            // Not overwritten: the logout ends without the MVPD's logout page.
            return endLogout(flow, forNewer: pending, configuration)
        }
        switch result {
        case .success(.logouts(let logouts)):
            let step = flow.mvpdID.flatMap { logouts[$0] } ?? logouts.values.first
            guard let step, step.actionName == .logout, step.actionType == .interactive, let url = step.url, !url.isEmpty,
                settings.secondScreen == nil
            else { return finishLogout(flow, alsoAnswering: [], condition: .noInteraction) }
            var waiting = flow
            let deadline = now.adding(settings.redirectTimeout)
            waiting.deadline = deadline
            moveAuthentication(to: .logout(waiting, .loggingOut), .interactive, .startTimer, .navigateToUrl)
            return [.startTimer(.redirectDeadline(flow.id), at: deadline), .emit(.navigateToUrl(url), answering: [])]
        case .success:
            return logoutFailed(flow, "malformed backend response: not a logout", .malformedAnswer)
        case .failure(let error):
            return logoutFailed(flow, error.summary, .failed)
        }
    }

    /// The login the store holds that is newer than this instance's logout: the device logged in again
    /// through another instance while the logout's request was out (saved after this instance's own last
    /// save: ``foreignStore`` is forgotten at every save of its own). Nil when there is none.
    func newerLoginStored() -> PendingLogin? {
        guard let pending = foreignStore?.pendingLogin, !pending.completing else { return nil }
        return pending
    }

    /// Ends `flow` for the newer login the store holds: the logout is over (its calls answered) and the
    /// login is taken up here, so this instance never saves its logout over it.
    mutating func endLogout(_ flow: LogoutFlow, forNewer pending: PendingLogin, _ configuration: RequestorConfiguration) -> [Action] {
        foreignStore = nil
        return finishLogout(flow, alsoAnswering: [], condition: .pendingLogin) + (resumePendingLogin(pending, configuration).map { [$0] } ?? [])
    }

    private mutating func logoutFailed(_ flow: LogoutFlow, _ why: String, _ condition: TransitionGuard) -> [Action] {
        let notice = Notice.logoutFailed.report("The service could not log out (\(why)); local tokens were already cleared.")
        return finishLogout(flow, alsoAnswering: [], notice: notice, condition: condition)
    }

    /// Completes a logout: `setAuthenticationStatus(0, USER_NOT_AUTHENTICATED_ERROR)` for all its
    /// waiters, after `notice` (why it ended without the provider) when there is one.
    mutating func finishLogout(
        _ flow: LogoutFlow, alsoAnswering: [CallID], notice: StatusReport? = nil, condition: TransitionGuard? = nil
    ) -> [Action] {
        var actions: [Action] = []
        actions.reserveCapacity(4)
        var rowActions: [TransitionAction] = []
        rowActions.reserveCapacity(3)
        if case .logout(_, .loggingOut) = authentication {
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
            rowActions.append(.cancelTimer)
        }
        if let notice {
            actions.append(.emit(.status(notice), answering: []))
            rowActions.append(.status)
        }
        rowActions.append(.setAuthenticationStatus)
        moveAuthentication(to: .unauthenticated, condition, rowActions)
        // A logout this instance started has its `logout` call waiting; one with none was taken from the store.
        let waiters = alsoAnswering.isEmpty ? flow.waiters : flow.waiters + alsoAnswering
        actions += flowStatus(0, ErrorCode.userNotAuthenticated, answering: waiters, takenFromStore: true)
        return actions
    }
}
