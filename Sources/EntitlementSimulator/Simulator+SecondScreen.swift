import EntitlementEngine

/// Cookbook E: registration codes, the activation page on a second device, and the TV's polls.
extension Simulator {
    /// The second-screen page where a code is entered (`GET …/activate?code=…`).
    public nonisolated var activationURL: String { "\(world.serviceProvider)/activate" }

    /// Issues a registration code (8 characters, no look-alikes) for at most 10 hours.
    func registrationCode(_ context: RequestContext, _ mvpdID: String, _ lifetime: Duration) throws(BackendError)
        -> RegistrationCode
    {
        guard let requestor = world.requestor(context.requestorID), requestor.mvpdIDs.contains(mvpdID) else {
            throw .denied(code: "invalid_request", message: "Unknown requestor or MVPD.")
        }
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let code = String(random.bytes(8).map { alphabet[Int($0) % alphabet.count] })
        let expires = clock.now().adding(min(lifetime, .seconds(36_000)))
        registrations[code] = Registration(
            requestorID: context.requestorID, mvpdID: mvpdID, deviceID: context.deviceID, expires: expires)
        issuedSecrets.append(code)
        return RegistrationCode(code: code, expires: expires)
    }

    /// The device's poll: the token once the code was used (the code is then spent), else pending.
    func checkRegistration(_ context: RequestContext, _ code: String) throws(BackendError) -> BackendResponse {
        guard let registration = registrations[code], registration.deviceID == context.deviceID,
            registration.requestorID == context.requestorID, clock.now() < registration.expires
        else { throw .denied(code: "invalid_code", message: "Unknown or expired registration code.") }
        guard let username = registration.username, let user = world.user(username),
            let provider = world.provider(registration.mvpdID)
        else { return .registrationPending }
        registrations[code] = nil
        let token = AuthenticationToken(
            value: mint("authn."), mvpdID: provider.id, requestorID: context.requestorID, userID: user.userID,
            expires: clock.now().adding(provider.authenticationTTL))
        authentications[token.value] = IssuedAuthentication(token: token, username: username, deviceID: context.deviceID)
        return .authenticated(token)
    }

    /// The second screen: a code opens the MVPD's login page for the code's MVPD.
    func startActivation(_ query: [String: String]) -> WebResponse {
        guard let code = query["code"]?.uppercased(), let registration = registrations[code],
            clock.now() < registration.expires, registration.username == nil,
            let provider = world.provider(registration.mvpdID)
        else { return .error(status: 400, message: "Unknown or expired code.") }
        let session = mint("session.")
        loginSessions[session] = LoginSession(
            requestorID: registration.requestorID, mvpdID: registration.mvpdID, deviceID: registration.deviceID,
            redirectURI: "", state: "", codeChallenge: "", registrationCode: code)
        return .redirect(PercentEncoding.url("\(provider.loginHost)/login", query: [("session", session)]))
    }
}
