import EntitlementEngine

/// The backend side of cookbook D: platform assertions it signs (as the platform) and verifies.
extension Simulator {
    /// The platform's signed statement that `username` signed in on `deviceID` (what a device's
    /// TV-provider account hands over); valid for ``SimulatedWorld/assertionTTL``.
    public func platformAssertion(username: String, deviceID: String) -> PlatformAssertion? {
        guard let user = world.user(username) else { return nil }
        let payload: JSONValue = [
            "mvpd": .string(user.mvpdID), "user": .string(username), "device": .string(deviceID),
            "expires": .int(clock.now().adding(world.assertionTTL).milliseconds),
            "nonce": .string(Base64URL.encode(random.bytes(12))),
        ]
        let bytes = payload.canonicalBytes
        let serialized = "vsa." + Base64URL.encode(bytes) + "."
            + Base64URL.encode(HMACSHA256.authenticationCode(for: bytes, key: world.platformKey))
        issuedSecrets.append(serialized)
        return PlatformAssertion(mvpdID: user.mvpdID, serialized: serialized)
    }

    /// Verifies the platform's assertion (signature, expiry, device, MVPD) and issues this
    /// requestor's authentication token for it.
    func exchangeAssertion(_ context: RequestContext, _ assertion: PlatformAssertion) throws(BackendError)
        -> AuthenticationToken
    {
        let parts = assertion.serialized.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "vsa", let payload = Base64URL.decode(String(parts[1])),
            let signature = Base64URL.decode(String(parts[2])),
            HMACSHA256.isValid(signature, for: payload, key: world.platformKey),
            let claims = try? JSONReader.read(String(decoding: payload, as: UTF8.self)),
            let mvpdID = claims["mvpd"]?.string, let username = claims["user"]?.string,
            let deviceID = claims["device"]?.string, let expires = claims["expires"]?.int
        else { throw .denied(code: "invalid_assertion", message: "The platform assertion is not signed by the platform.") }
        guard clock.now() < Timestamp(milliseconds: expires) else {
            throw .denied(code: "invalid_assertion", message: "The platform assertion expired.")
        }
        guard deviceID == context.deviceID, mvpdID == assertion.mvpdID, let user = world.user(username),
            user.mvpdID == mvpdID, let provider = world.provider(mvpdID), provider.platformSSO,
            world.requestor(context.requestorID)?.mvpdIDs.contains(mvpdID) == true
        else { throw .denied(code: "invalid_assertion", message: "The platform assertion is not for this device and requestor.") }
        let token = AuthenticationToken(
            value: mint("authn."), mvpdID: provider.id, requestorID: context.requestorID, userID: user.userID,
            expires: clock.now().adding(provider.authenticationTTL), source: .platformSSO)
        authentications[token.value] = IssuedAuthentication(token: token, username: user.username, deviceID: deviceID)
        return token
    }
}
