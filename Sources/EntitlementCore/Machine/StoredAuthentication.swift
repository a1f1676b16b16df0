/// What the authentication region keeps in token storage in a given state: the authentication, or the
/// login, logout or second-screen registration waiting for the outside world — what another instance
/// (or this one after a restart) needs to carry on.
struct StoredAuthentication {
    var authentication: AuthenticationToken?
    var pendingLogin: PendingLogin?
    var pendingLogout: PendingLogout?
    var pendingRegistration: PendingRegistration?

    /// The stored part of `state`.
    init(_ state: AuthenticationState) {
        switch state {
        case .authenticated(let token): authentication = token
        case .login(let flow, .awaitingRedirect):
            if let record = flow.completingElsewhere {
                pendingLogin = record
            } else if let mvpd = flow.mvpd, let secrets = flow.secrets, let code = flow.code, let deadline = flow.deadline {
                pendingLogin = PendingLogin(
                    mvpdID: mvpd.id, state: secrets.state, code: code, deadline: deadline, data: flow.data, url: flow.url)
            }
        case .login(let flow, .readingProfile) where flow.redirectAccepted:
            if let mvpd = flow.mvpd, let secrets = flow.secrets, let code = flow.code, let deadline = flow.deadline {
                pendingLogin = PendingLogin(
                    mvpdID: mvpd.id, state: secrets.state, code: code, deadline: deadline, data: flow.data, url: flow.url,
                    completing: true)
            }
        case .logout(let flow, .loggingOut):
            if let secrets = flow.secrets, let deadline = flow.deadline {
                pendingLogout = PendingLogout(state: secrets.state, deadline: deadline, mvpdID: flow.mvpdID)
            }
        case .login(let flow, .awaitingSecondScreen(let code, _)):
            if let mvpd = flow.mvpd { pendingRegistration = PendingRegistration(mvpdID: mvpd.id, code: code.code, expires: code.expires) }
        default: break
        }
    }
}
