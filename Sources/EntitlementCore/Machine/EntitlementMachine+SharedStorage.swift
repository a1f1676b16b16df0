/// The authentication region following the token store other instances share: a login or logout
/// another node (or this one before a restart) started is taken up here, and what the store says
/// changed (a login or logout elsewhere, a second-screen registration) is followed.
extension EntitlementMachine {
    /// Whether storage holds something else than this machine last saved or read (another
    /// instance logged in or out, started or took a login, cached an authorization): the engine
    /// then feeds `Input.storageChanged(_:)`. The engine asks only when the stored version changed.
    package func differs(from stored: StoredTokens) -> Bool {
        guard case .configured = configuration else { return false }
        return stored != persisted
    }

    /// How long after its deadline a login another instance is completing still stands: that instance
    /// accepted the redirect in time and reads the profile — each read within the request deadline, a few
    /// reads at most, with pauses — so its outcome is waited for, not expired under it.
    package var completingGrace: Duration {
        settings.requestTimeout * Self.profileReads + Self.longestThrottlePause * (Self.profileReads - 1)
    }

    /// When a stored login stops standing: a login waiting for its redirect at its deadline, one another
    /// instance is completing ``completingGrace`` later.
    func expiry(of pending: PendingLogin) -> Timestamp {
        pending.completing ? pending.deadline.adding(completingGrace) : pending.deadline
    }

    /// Resumes a login another instance (or this one before a restart) started: its state,
    /// session code, MVPD and deadline come from storage; nobody here waits for it yet.
    mutating func resumePendingLogin(_ pending: PendingLogin?, _ configuration: RequestorConfiguration) -> Action? {
        guard let pending, expiry(of: pending) > now, let mvpd = configuration.mvpd(pending.mvpdID) else { return nil }
        let flow = LoginFlow(id: nextFlow(), mvpd: nil, secrets: nil, deadline: nil, waiters: [], data: [:]).adopting(pending, mvpd: mvpd)
        moveAuthentication(to: .login(flow, .awaitingRedirect), .pendingLogin, .startTimer)
        selectedProviderID = mvpd.id
        return .startTimer(.redirectDeadline(flow.id), at: expiry(of: pending))
    }

    /// A login this instance waited for ended elsewhere, and the store now holds a logout waiting for its
    /// redirect: the login's calls are answered (not authenticated), and the logout is waited for here too.
    mutating func resumePendingLogout(_ pending: PendingLogout?, ending flow: LoginFlow) -> [Action]? {
        guard let pending, pending.deadline > now else { return nil }
        let ended = endLogin(
            flow, code: ErrorCode.userNotAuthenticated, reason: "The login ended on another instance, which is logging out.",
            condition: .pendingLogout)
        return ended + (resumePendingLogout(pending).map { [$0] } ?? [])
    }

    /// A logout another instance started (or this one before a restart) is waiting for its redirect in
    /// storage: wait for it here too, so the redirect completes it on whichever instance it reaches.
    mutating func resumePendingLogout(_ pending: PendingLogout?) -> Action? {
        guard let pending, pending.deadline > now else { return nil }
        let flow = LogoutFlow(
            id: nextFlow(), secrets: FlowSecrets(state: pending.state), deadline: pending.deadline, mvpdID: pending.mvpdID, waiters: [])
        moveAuthentication(to: .logout(flow, .loggingOut), .pendingLogout, .startTimer)
        selectedProviderID = nil
        return .startTimer(.redirectDeadline(flow.id), at: pending.deadline)
    }

    /// Another instance sharing the storage changed what is stored: the step-ups are taken up, the
    /// authentication followed (``followAuthentication(_:_:)``), then the calls here waiting for a step-up
    /// that ended elsewhere answered — after a logout there has ended them — and, when the store marks a
    /// logout this instance had not seen, what it still asks for ended as its own logout would end it.
    mutating func storageChanged(_ stored: StoredTokens) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [] }
        let loggedOutElsewhere = stored.loggedOut != nil && stored.loggedOut != persisted.loggedOut
        logoutMark = stored.loggedOut
        let before = adoptStepUps(stored.pendingStepUps)
        let followed = followAuthentication(stored, configuration, loggedOutElsewhere: loggedOutElsewhere) + followStepUps(before: before)
        guard loggedOutElsewhere else { return followed }
        return followed + endRequestsOfTheLoggedOutLogin()
    }

    /// A logout made elsewhere, seen by its mark (on a device with the platform's sign-in a cancel leaves
    /// one too) or by another login in the store: what this instance still asks for the device ends as a
    /// logout here would end it, and the answers that come later reach nobody. A request waiting for a login
    /// here follows that login (which a logout elsewhere does not end).
    private mutating func endRequestsOfTheLoggedOutLogin() -> [Action] {
        abortRequests(
            code: ErrorCode.userNotAuthenticated, description: Self.endedElsewhere, condition: .loggedOutElsewhere,
            sparingThoseAwaitingLogin: true)
    }

    /// What a call ended by a logout or cancel another instance made is told: from the store this instance
    /// cannot tell which it was.
    static let endedElsewhere = "The device logged out or cancelled on another instance."

    /// Another instance changed the authentication: adopt it where this instance is idle, or where it was
    /// waiting for a redirect that the other one received (`loggedOutElsewhere`: the store marks a logout
    /// this instance had not seen).
    private mutating func followAuthentication(
        _ stored: StoredTokens, _ configuration: RequestorConfiguration, loggedOutElsewhere: Bool
    ) -> [Action] {
        // What the store held as this instance last read it: a logout or sign-out made since shows against it.
        let lastRead = foreignStore ?? persisted
        // Where this instance keeps its own view, it counts what it holds as stored (`storedTokens`, read
        // before anything here changes it), so its next step saves that over what it followed.
        persisted = stored
        if foreignStore != nil { foreignStore = nil }
        let token = usableStoredToken(stored, configuration)
        func adopt() {
            authorizationExpiries = [:]
            selectedProviderID = stored.selectedProvider.flatMap { configuration.mvpd($0) == nil ? nil : $0 }
        }
        switch authentication {
        case .unauthenticated:
            if let token {
                moveAuthentication(to: .authenticated(token), .validStoredToken)
            } else if let resumed = resumePendingLogin(stored.pendingLogin, configuration) ?? resumePendingLogout(stored.pendingLogout) {
                return [resumed]
            }
            adopt()  // the provider chosen elsewhere too: it is the user's
            // Following the store writes nothing: what this instance does not take up (another
            // instance's second-screen code, which it polls) stays in the store.
            persisted = storedTokens
            keepForeign(stored)
            return []
        case .authenticated(let current):
            if let token {
                guard token != current else { return [] }
                moveAuthentication(to: .authenticated(token), .validStoredToken)
                adopt()
                guard !token.isSameLogin(as: current) else { return [] }
                // Another login than the one this instance holds: the device logged out and signed in again
                // elsewhere, and this instance saw neither step. The decisions it cached for the old login are
                // gone, and what it asks for the old login ends as that logout ends it (its answers, decided
                // under the old login, reach nobody) — here, or with a logout mark in ``storageChanged(_:)``.
                preauthorizationCache = [:]
                return loggedOutElsewhere ? [] : endRequestsOfTheLoggedOutLogin()
            }
            // Signed out elsewhere: what this instance still asks for the user ends as a logout here
            // ends it, and the answers that come later reach nobody (nothing for a signed-out device).
            let ended = abortRequests(
                code: ErrorCode.userNotAuthenticated, description: "The user is no longer signed in.", condition: .noValidStoredToken)
            if let resumed = resumePendingLogout(stored.pendingLogout) {
                // Logged out elsewhere, waiting for the MVPD's logout redirect: it may come here.
                authorizationExpiries = [:]
                return ended + [resumed]
            } else if let resumed = resumePendingLogin(stored.pendingLogin, configuration) {
                // Signed out and logging in again elsewhere (this instance missed the steps between):
                // the login's redirect may come here.
                authorizationExpiries = [:]
                selectedProviderID = stored.selectedProvider.flatMap { configuration.mvpd($0) == nil ? nil : $0 }
                return ended + [resumed]
            }
            moveAuthentication(to: .unauthenticated, .noValidStoredToken)
            adopt()
            // As when idle: following the store writes nothing, so another instance's second-screen code
            // (which that instance polls) stays in the store.
            persisted = storedTokens
            keepForeign(stored)
            return ended
        case .login(let flow, .selectingProvider), .login(let flow, .platformPicking), .login(let flow, .requestingPartnerSession):
            // The user may answer on another node: a login finished there, or started there (the
            // device's choice reached that node), ends this picker.
            var dismiss: [Action] = []
            var rowActions: [TransitionAction] = []
            if case .login(_, .platformPicking) = authentication {
                dismiss = [.dismissPlatformPicker(flow.id), .emit(.dismissTvProviderDialog(platformDialog(flow, configuration)), answering: [])]
                rowActions = [.dismissTvProviderDialog]
            }
            if let token {
                moveAuthentication(to: .authenticated(token), .validStoredToken, rowActions + [.setAuthenticationStatus])
                adopt()
                return dismiss + flowStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, takenFromStore: flow.startedElsewhere, token: token)
                    + resumeAuthorizationsAfterLogin(token, configuration)
            }
            if case .login(_, .selectingProvider) = authentication, let logout = resumePendingLogout(stored.pendingLogout, ending: flow) {
                // Meanwhile the user signed in elsewhere and is logging out there: the picker's login ends (its
                // calls answered: not authenticated) and the logout's redirect is waited for here too.
                adopt()
                return logout
            }
            if stored.pendingLogin == nil, let shown = followRegistration(stored.pendingRegistration, choosing: flow, rowActions, configuration) {
                adopt()
                return dismiss + shown
            }
            guard let pending = stored.pendingLogin, expiry(of: pending) > now, let mvpd = configuration.mvpd(pending.mvpdID) else {
                persisted = storedTokens
                keepForeign(stored)
                return []
            }
            let waiting = flow.adopting(pending, mvpd: mvpd)
            moveAuthentication(to: .login(waiting, .awaitingRedirect), .pendingLogin, rowActions + [.startTimer])
            adopt()
            return dismiss + [.startTimer(.redirectDeadline(waiting.id), at: expiry(of: pending))]
        case .logout(var flow, .loggingOut):
            if let pending = stored.pendingLogout, token == nil {
                guard pending.state != flow.secrets?.state, pending.deadline > now else { return [] }
                // Another instance started the logout again: wait for that one's redirect.
                flow.secrets = FlowSecrets(state: pending.state)
                flow.deadline = pending.deadline
                flow.mvpdID = pending.mvpdID
                moveAuthentication(to: .logout(flow, .loggingOut), .pendingLogout, .cancelTimer, .startTimer)
                return [.cancelTimer(.redirectDeadline(flow.id)), .startTimer(.redirectDeadline(flow.id), at: pending.deadline)]
            }
            // Another instance took the logout's redirect (or the user signed in there): the logout is done.
            var actions = finishLogout(flow, alsoAnswering: [], condition: .pendingLogoutTaken)
            if let token {
                moveAuthentication(to: .authenticated(token), .validStoredToken)
                actions += resumeAuthorizationsAfterLogin(token, configuration)
            } else if let resumed = resumePendingLogin(stored.pendingLogin, configuration) {
                actions.append(resumed)
            }
            adopt()
            return actions
        case .login(var flow, .awaitingRedirect):
            guard let token else {
                // Whatever else this instance follows, the login stands as storage says.
                adopt()
                if let pending = stored.pendingLogin, expiry(of: pending) > now, let mvpd = configuration.mvpd(pending.mvpdID) {
                    if pending.completing {
                        guard flow.completingElsewhere != pending else { return [] }
                        // Another instance accepted the redirect and reads the profile: this one waits for
                        // the outcome in storage, without the secrets, so the same redirect can never
                        // complete the login here too — past the redirect's deadline, while the reads may last.
                        flow = flow.adopting(pending, mvpd: mvpd)
                        moveAuthentication(to: .login(flow, .awaitingRedirect), .pendingLoginTaken, .cancelTimer, .startTimer)
                        return [.cancelTimer(.redirectDeadline(flow.id)), .startTimer(.redirectDeadline(flow.id), at: expiry(of: pending))]
                    }
                    if flow.completingElsewhere == nil, pending.state == flow.secrets?.state { return [] }
                    // Another instance restarted the login: wait for that one, with its secrets and deadline.
                    flow = flow.adopting(pending, mvpd: mvpd)
                    moveAuthentication(to: .login(flow, .awaitingRedirect), .pendingLogin, .cancelTimer, .startTimer)
                    return [.cancelTimer(.redirectDeadline(flow.id)), .startTimer(.redirectDeadline(flow.id), at: pending.deadline)]
                }
                if let logout = resumePendingLogout(stored.pendingLogout, ending: flow) {
                    // The login ended elsewhere and the user is logging out there: so is this instance.
                    return logout
                }
                if let deadline = flow.deadline, now >= deadline {
                    // Another instance's copy of the deadline ended the login first: it expired here too.
                    return expireLogin(flow, condition: .deadlinePassed)
                }
                // Neither a login nor an authentication is stored: the login ended on another instance
                // without signing in (cancelled, refused, or signed in and out again before this one looked).
                return endLogin(
                    flow, code: ErrorCode.userNotAuthenticated, reason: "The login ended on another instance without signing in.",
                    condition: .loginEndedElsewhere)
            }
            moveAuthentication(to: .authenticated(token), .validStoredToken, .cancelTimer, .setAuthenticationStatus)
            adopt()
            return [.cancelTimer(.redirectDeadline(flow.id))]
                + flowStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, takenFromStore: flow.startedElsewhere, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        case .login(let flow, .awaitingSecondScreen):
            // The user signed in elsewhere (the code of a second-screen login another instance polls, a
            // login finished there): this instance stops polling and answers its calls signed in.
            guard let token else {
                if loggedOutElsewhere {
                    // The device logged out or cancelled through another instance, which may have shown a newer
                    // code since: the user may have entered this one before, so its next read would sign the
                    // device in after the logout. The flow ends here, and saves nothing over the store: a code
                    // shown there since is the device's login now (taken up here when the device asks).
                    adopt()
                    let ended = endLogin(flow, code: ErrorCode.userNotAuthenticated, reason: Self.endedElsewhere, condition: .loggedOutElsewhere)
                    persisted = storedTokens
                    keepForeign(stored)
                    return ended
                }
                if stored.pendingRegistration == nil, stored.pendingLogin == nil, stored.pendingLogout == nil {
                    // Storage holds no code, login or authentication any more: the device logged out or
                    // cancelled through another instance, which took this code out. Polling on would sign
                    // the device in when the old code is entered: the flow ends here too.
                    adopt()
                    return endLogin(
                        flow, code: ErrorCode.userNotAuthenticated,
                        reason: "The login ended on another instance without signing in.", condition: .loginEndedElsewhere)
                }
                // Another instance shows a code of its own: whichever the user enters signs the device in.
                persisted = storedTokens
                keepForeign(stored)
                return []
            }
            moveAuthentication(to: .authenticated(token), .validStoredToken, .cancelTimer, .setAuthenticationStatus)
            adopt()
            return secondScreenTimers(flow).map(Action.cancelTimer)
                + flowStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, takenFromStore: flow.startedElsewhere, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        case .login(let flow, .readingProfile)
        where flow.redirectAccepted && token == nil && stored.pendingLogin?.state != flow.secrets?.state:
            // This instance accepted the login's redirect and reads its profile, and storage no longer holds
            // the login: it was cancelled or logged out on another instance meanwhile (and maybe started
            // again there). The login ends here too, unsigned — its profile, when it comes, is late — and
            // the logout or the new login waiting in storage is followed.
            adopt()
            if let logout = resumePendingLogout(stored.pendingLogout, ending: flow) { return logout }
            let ended = endLogin(
                flow, code: ErrorCode.userNotAuthenticated, reason: "The login ended on another instance without signing in.",
                condition: .loginEndedElsewhere)
            return ended + (resumePendingLogin(stored.pendingLogin, configuration).map { [$0] } ?? [])
        case .login(let flow, .readingProfile)
        where !flow.redirectAccepted && token == nil
            && (loggedOutElsewhere || stored.pendingLogout.map { $0 != lastRead.pendingLogout } ?? false
                || (lastRead.authentication != nil && stored.authentication == nil)):
            // A login reading its profile with no redirect to wait for — the platform's sign-in, a session that
            // needed no login page — when the device logged out or cancelled through another instance (a mark
            // or a logout waiting for its redirect it had not seen, or a sign-in it had seen gone): that ends
            // every login of the device, so this one ends unsigned (the logout waited for here too), and its
            // profile, when it comes, is late.
            adopt()
            if let logout = resumePendingLogout(stored.pendingLogout, ending: flow) { return logout }
            return endLogin(
                flow, code: ErrorCode.userNotAuthenticated, reason: Self.endedElsewhere,
                condition: .loggedOutElsewhere)
        default:
            // In the middle of its own flow this instance keeps its view until the flow ends.
            persisted = storedTokens
            keepForeign(stored)
            return []
        }
    }

    /// Notes what storage holds beyond this instance's view (``foreignStore``), when it does.
    private mutating func keepForeign(_ stored: StoredTokens) {
        if stored != persisted { foreignStore = stored }
    }

    /// A logout or a cancel ends every login of the device, also one this instance did not take up (another
    /// instance's registration code): its save goes over what storage holds.
    mutating func saveOverForeignStore() {
        guard let foreign = foreignStore else { return }
        persisted = foreign
        foreignStore = nil
    }
}
