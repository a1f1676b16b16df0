/// The authentication region, including logout.
///
/// A login is one state, ``login(_:_:)``, holding its flow and the step it is at: what every step
/// shares (waiters, provider, secrets, deadline) lives once in `LoginFlow`; what one step alone
/// waits for (an operation, a registration code, a read attempt) lives in its `LoginStep`. A logout
/// is shaped the same way. The chart draws each step as a state (``Kind``).
/// The flows are held out of line (`indirect`): a machine spends most of its life unauthenticated or
/// authenticated, and inline a flow would make every machine 64 bytes larger.
package enum AuthenticationState: Sendable, Hashable {
    /// Not known yet: waits for the configuration and the stored tokens.
    case unknown
    /// No valid authentication: waits for getAuthentication, getAuthorization or setSelectedProvider.
    case unauthenticated
    /// A login runs: its flow, at `step`.
    indirect case login(LoginFlow, LoginStep)
    /// A valid authentication token is held: waits for logout, expiry or a forced login.
    case authenticated(AuthenticationToken)
    /// A logout runs (local tokens are already cleared): its flow, at `step`.
    indirect case logout(LogoutFlow, LogoutStep)

    /// The running login's flow, if a login runs.
    package var loginFlow: LoginFlow? {
        if case .login(let flow, _) = self { flow } else { nil }
    }

    /// The running logout's flow, if a logout runs.
    package var logoutFlow: LogoutFlow? {
        if case .logout(let flow, _) = self { flow } else { nil }
    }

    /// The flow waiting for the shell to draw its secrets (a login or logout preparing), if any: a step
    /// that moves a flow here asks for them (`MachineStep.secretsToDraw`).
    var flowDrawingSecrets: FlowID? {
        switch self {
        case .login(let flow, .preparingLogin): flow.id
        case .logout(let flow, .preparingLogout): flow.id
        default: nil
        }
    }
}

/// Where a running login is: each step names what it waits for.
package enum LoginStep: Sendable, Hashable {
    /// `displayProviderDialog` sent: waits for `setSelectedProvider` (an id, or nil to cancel).
    case selectingProvider
    /// The device has a platform picker (cookbook D): `POST sessions/sso/{partner}` sent for the request
    /// the platform's framework answers; waits for it — then the picker, or the provider dialog when the
    /// service falls back or fails.
    case requestingPartnerSession(operation: OperationID)
    /// `presentTvProviderDialog` sent: waits for the platform's picker (cookbook D) to sign in,
    /// fall back to the classic dialog ("Other TV Providers", an unsupported provider) or cancel.
    case platformPicking
    /// Provider chosen: waits for the shell to draw the flow's `state` (drawn at once, before any
    /// other input; never seen between two calls).
    case preparingLogin
    /// `POST sessions` sent (its `redirectUrl` carries the flow's `state`): waits for the session —
    /// a login URL and code, or `authorize` when no login is needed (TempPass, degraded, a profile
    /// that already exists).
    case creatingSession(operation: OperationID)
    /// `navigateToUrl` sent: waits for `handleExternalURL` with this flow's `state`, or the deadline.
    case awaitingRedirect
    /// `status(REGCODE)` sent with the session's code (cookbook E) — or, for a code taken up from storage
    /// or asked for again, to be sent when its read answers — polls the profile by code on a timer until
    /// the user has signed in on a second screen (or the code expires, or the login is cancelled); `poll`
    /// is the read in flight, if any.
    case awaitingSecondScreen(RegistrationCode, poll: OperationID?)
    /// Redirect accepted (or session authorized, or platform signed in): reads the profile the
    /// login made; `operation` is nil while waiting to read again (the profile was not there yet),
    /// `attempt` counts the reads.
    case readingProfile(operation: OperationID?, attempt: Int)
}

/// Where a running logout is.
package enum LogoutStep: Sendable, Hashable {
    /// Local tokens cleared: waits for the shell to draw the logout flow's `state` (at once).
    case preparingLogout
    /// `GET logout/{mvpd}` sent: waits for the logout's next step (an interactive MVPD logout, or done).
    case requestingLogout(operation: OperationID)
    /// Logout `navigateToUrl` sent: waits for `handleExternalURL` with the logout `state`, or the deadline.
    case loggingOut
}

/// One login attempt, from the provider dialog to the profile.
package struct LoginFlow: Sendable, Hashable {
    /// The flow's id.
    package var id: FlowID
    /// The chosen MVPD (nil while the dialog is open).
    package var mvpd: MVPD?
    /// The flow's `state`, once drawn.
    package var secrets: FlowSecrets?
    /// The session's code, once the session was created: the profile is read by it (a secret).
    package var code: String?
    /// Whether the session was resumed with the parameters it lacked (once per login).
    package var resumed = false
    /// Whether the second screen's read in flight asks the session's status (a poll was refused), not the profile.
    package var checksSession = false
    /// Why the registration code is shown when the read of its profile answers, while it waits to be
    /// (nil once shown): the user may have entered it already, or the service dropped it.
    package var showsCodeAfterRead: CodeShowing?
    /// Whether the profile is read with the MVPD, not by the session's code: the redirect came (the user
    /// signed in at the page), but the code died at the service meanwhile (a session request that arrived
    /// after this login's replaced it). Once per login.
    package var readsProfileByProvider = false
    /// When the redirect must have arrived by.
    package var deadline: Timestamp?
    /// The calls the flow's one `setAuthenticationStatus` answers.
    package var waiters: [CallID]
    /// The `data` given to `getAuthentication` (kept with a pending login).
    package var data: [String: String]
    /// The MVPD's login page the device was sent to, once the session was created (kept with a pending login).
    package var url: String?
    /// Whether the login was started by another instance sharing the storage (or by this one before a
    /// restart) and taken from storage here: the device may never have received its URL.
    package var startedElsewhere = false
    /// The read of this login's profile by its session code, in flight, before its page is handed out
    /// again (the user may have signed in there already, and only the redirect was lost).
    package var probe: OperationID?
    /// Whether this instance accepted the login's redirect (and reads its profile): storage says the
    /// login is completing, so no other instance accepts the redirect again.
    package var redirectAccepted = false
    /// The login as storage holds it while another instance, which accepted its redirect, reads its
    /// profile: this instance waits for the outcome there and never accepts the redirect itself.
    package var completingElsewhere: PendingLogin?

    /// Whether a login call here reads the login's profile first: a login taken from storage whose page
    /// is known (the user may have signed in, with only the redirect lost), or one another instance is
    /// completing (it may have died reading the profile).
    var readsProfileFirst: Bool { startedElsewhere && ((url != nil && code != nil) || completingElsewhere != nil) }

    /// The session code the login's profile is read by.
    var profileCode: String? { code ?? completingElsewhere?.code }

    /// Creates a login flow.
    package init(
        id: FlowID, mvpd: MVPD?, secrets: FlowSecrets?, deadline: Timestamp?, waiters: [CallID], data: [String: String]
    ) {
        self.id = id
        self.mvpd = mvpd
        self.secrets = secrets
        self.code = nil
        self.deadline = deadline
        self.waiters = waiters
        self.data = data
        self.url = nil
    }

    /// This flow, waiting for the redirect of `pending` (a login taken from the store, started
    /// elsewhere): its secrets, session code, deadline, data and page; its waiters stay. A login another
    /// instance is completing brings no secrets, code or page: only its outcome is waited for.
    func adopting(_ pending: PendingLogin, mvpd: MVPD) -> LoginFlow {
        var flow = self
        flow.mvpd = mvpd
        flow.deadline = pending.deadline
        flow.data = pending.data
        flow.startedElsewhere = true
        flow.redirectAccepted = false
        flow.probe = nil  // a read for another login's code would answer for that one
        if pending.completing {
            flow.secrets = nil
            flow.code = nil
            flow.url = nil
            flow.completingElsewhere = pending
        } else {
            flow.secrets = FlowSecrets(state: pending.state)
            flow.code = pending.code
            flow.url = pending.url
            flow.completingElsewhere = nil
        }
        return flow
    }
}

/// Why a second-screen login reads its registration code's profile before it shows the code
/// (``LoginFlow/showsCodeAfterRead``).
package enum CodeShowing: Sendable, Hashable {
    /// Taken up from storage at `setRequestor` (the app showed it before it restarted): no call asks, so a
    /// code that died ends the login as a poll finding it dead does (the app is told of the code's end).
    case restarted
    /// A call asks for it (taken up from storage, or asked for again): a code that died gives way to a new
    /// session's.
    case asked
}

/// One logout: local tokens are already gone; the logout request, then (interactive) the MVPD's
/// logout redirect chain.
package struct LogoutFlow: Sendable, Hashable {
    /// The flow's id.
    package var id: FlowID
    /// The flow's `state`, once drawn.
    package var secrets: FlowSecrets?
    /// When the redirect must have arrived by.
    package var deadline: Timestamp?
    /// The MVPD logged out of on the service (the authentication's, or a running login's).
    package var mvpdID: String?
    /// The calls the logout's `setAuthenticationStatus` answers.
    package var waiters: [CallID]

    /// Creates a logout flow.
    package init(id: FlowID, secrets: FlowSecrets?, deadline: Timestamp?, mvpdID: String? = nil, waiters: [CallID]) {
        self.id = id
        self.secrets = secrets
        self.deadline = deadline
        self.mvpdID = mvpdID
        self.waiters = waiters
    }
}
