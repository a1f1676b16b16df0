import EntitlementEngine

/// TempPass: one window per requestor, MVPD and device, until reset.
extension Simulator {
    /// Grants this device's TempPass for the MVPD's authentication TTL, counted from the first
    /// grant; within that window it is granted again with the same end; after it, refused until
    /// ``resetTempPass(deviceID:)``.
    func startTempPass(_ context: RequestContext, _ mvpdID: String) throws(BackendError) -> AuthenticationToken {
        guard let provider = world.provider(mvpdID), provider.tempPass,
            let requestor = world.requestor(context.requestorID), requestor.mvpdIDs.contains(mvpdID)
        else { throw .denied(code: "invalid_temppass", message: "'\(mvpdID)' is not a TempPass of this requestor.") }
        let key = "\(context.requestorID)|\(mvpdID)|\(context.deviceID)"
        let now = clock.now()
        let ends = tempPasses[key] ?? now.adding(provider.authenticationTTL)
        guard now < ends else {
            throw .denied(code: "temppass_expired", message: "This device has used its TempPass.")
        }
        tempPasses[key] = ends
        let guid = Hex.encode(Array(SHA256.hash("temppass/" + context.deviceID).prefix(16)))
        let user = SimulatedWorld.User(
            username: "temppass:\(context.deviceID)", password: "", mvpdID: mvpdID, userID: guid,
            entitlements: Set(requestor.resources))
        let token = AuthenticationToken(
            value: mint("authn."), mvpdID: mvpdID, requestorID: context.requestorID, userID: guid, expires: ends,
            source: .tempPass)
        authentications[token.value] = IssuedAuthentication(
            token: token, username: user.username, deviceID: context.deviceID, tempPassUser: user)
        return token
    }

    /// Lets `deviceID` use its TempPasses again (Adobe's reset-TempPass management call).
    public func resetTempPass(deviceID: String) {
        tempPasses = tempPasses.filter { !$0.key.hasSuffix("|" + deviceID) }
    }
}
