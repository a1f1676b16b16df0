import EntitlementEngine

/// Single sign-on across requestors, and passive authentication on the MVPD's own session.
extension Simulator {
    /// Issues this requestor's token for another requestor's valid authentication on the same
    /// device, when its MVPD allows single sign-on; the session (and its end) is shared.
    func singleSignOn(_ context: RequestContext, _ presented: AuthenticationToken) throws(BackendError)
        -> AuthenticationToken
    {
        guard let issued = authentications[presented.value], !issued.revoked, clock.now() < issued.token.expires,
            issued.deviceID == context.deviceID, issued.tempPassUser == nil
        else { throw .denied(code: "sso_invalid", message: "The presented authentication is not valid on this device.") }
        guard let provider = world.provider(issued.token.mvpdID), !provider.perRequestor,
            world.requestor(context.requestorID)?.mvpdIDs.contains(provider.id) == true
        else { throw .denied(code: "sso_not_allowed", message: "This MVPD does not allow single sign-on here.") }
        let token = AuthenticationToken(
            value: mint("authn."), mvpdID: provider.id, requestorID: context.requestorID, userID: issued.token.userID,
            expires: issued.token.expires)
        authentications[token.value] = IssuedAuthentication(token: token, username: issued.username, deviceID: context.deviceID)
        return token
    }

    /// Signs in without UI with an MVPD that authenticates per requestor, when the MVPD's own
    /// session on the device is still open (SAML `IsPassive`).
    func passiveAuthentication(_ context: RequestContext, _ mvpdID: String) throws(BackendError)
        -> AuthenticationToken
    {
        guard let provider = world.provider(mvpdID), world.requestor(context.requestorID)?.mvpdIDs.contains(mvpdID) == true,
            let session = mvpdSessions[context.deviceID + "|" + mvpdID], clock.now() < session.ends,
            let user = world.user(session.username)
        else { throw .denied(code: "passive_authentication_failed", message: "No session with this MVPD on the device.") }
        let token = AuthenticationToken(
            value: mint("authn."), mvpdID: provider.id, requestorID: context.requestorID, userID: user.userID,
            expires: clock.now().adding(provider.authenticationTTL))
        authentications[token.value] = IssuedAuthentication(token: token, username: user.username, deviceID: context.deviceID)
        return token
    }
}
