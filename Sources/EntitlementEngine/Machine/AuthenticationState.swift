/// The authentication region, including logout.
public enum AuthenticationState: Sendable, Hashable {
    /// Not known yet: waits for the configuration and the stored tokens.
    case unknown
    /// No valid authentication: waits for getAuthentication, getAuthorization or setSelectedProvider.
    case unauthenticated
    /// `displayProviderDialog` sent: waits for `setSelectedProvider` (an id, or nil to cancel).
    case selectingProvider(LoginFlow)
    /// `presentTvProviderDialog` sent: waits for the platform's picker (cookbook D) to sign in,
    /// fall back to the classic dialog ("Other TV Providers", an unsupported provider) or cancel.
    case platformPicking(LoginFlow)
    /// Provider chosen: waits for the shell to draw the flow's `state` and PKCE verifier
    /// (drawn at once, before any other input; never seen between two calls).
    case preparingLogin(LoginFlow)
    /// `navigateToUrl` sent: waits for `handleExternalURL` with this flow's `state`, or the deadline.
    case awaitingRedirect(LoginFlow)
    /// Second-screen device (cookbook E), secrets drawn: waits for the backend's registration code.
    case requestingCode(LoginFlow, operation: OperationID)
    /// `status(REGCODE)` sent: polls on a timer until the code was used on a second screen (or it
    /// expires, or the login is cancelled); `poll` is the check in flight, if any.
    case awaitingSecondScreen(LoginFlow, RegistrationCode, poll: OperationID?)
    /// Redirect accepted (or platform signed in): waits for the backend to exchange the code (or
    /// the platform's assertion) for an authentication token.
    case exchangingCode(LoginFlow, operation: OperationID)
    /// A valid authentication token is held: waits for logout, expiry or a forced login.
    case authenticated(AuthenticationToken)
    /// Local tokens cleared: waits for the shell to draw the logout flow's `state` (at once).
    case preparingLogout(LogoutFlow)
    /// Logout `navigateToUrl` sent: waits for `handleExternalURL` with the logout `state`, or the deadline.
    case loggingOut(LogoutFlow)
}

/// One login attempt, from the provider dialog to the code exchange.
public struct LoginFlow: Sendable, Hashable {
    /// The flow's id.
    public var id: FlowID
    /// The chosen MVPD (nil while the dialog is open).
    public var mvpd: MVPD?
    /// The flow's `state` and PKCE verifier, once drawn.
    public var secrets: FlowSecrets?
    /// When the redirect must have arrived by.
    public var deadline: Timestamp?
    /// The calls the flow's one `setAuthenticationStatus` answers.
    public var waiters: [CallID]
    /// The `data` given to `getAuthentication`, forwarded at the code exchange.
    public var data: [String: String]

    /// Creates a login flow.
    public init(
        id: FlowID, mvpd: MVPD?, secrets: FlowSecrets?, deadline: Timestamp?, waiters: [CallID], data: [String: String]
    ) {
        self.id = id
        self.mvpd = mvpd
        self.secrets = secrets
        self.deadline = deadline
        self.waiters = waiters
        self.data = data
    }
}

/// One logout: local tokens are already gone; waits for the logout redirect chain to finish.
public struct LogoutFlow: Sendable, Hashable {
    /// The flow's id.
    public var id: FlowID
    /// The flow's `state`, once drawn.
    public var secrets: FlowSecrets?
    /// When the redirect must have arrived by.
    public var deadline: Timestamp?
    /// The calls the logout's `setAuthenticationStatus` answers.
    public var waiters: [CallID]

    /// Creates a logout flow.
    public init(id: FlowID, secrets: FlowSecrets?, deadline: Timestamp?, waiters: [CallID]) {
        self.id = id
        self.secrets = secrets
        self.deadline = deadline
        self.waiters = waiters
    }
}
