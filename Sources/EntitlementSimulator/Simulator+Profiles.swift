import EntitlementEngine
import EntitlementSupport

/// Profiles: by code, by MVPD, all of a device's (with single sign-on and passive authentication),
/// TempPass and degraded profiles issued by Adobe, and the platform's partner profile.
extension Simulator {
    // MARK: - Reading profiles

    /// `GET profiles/code/{code}`: the profile the session's login saved; an empty map until the
    /// user has logged in (what a poll sees).
    func profile(_ context: RequestContext, code: String) throws(V2EnhancedError) -> [String: V2Profile] {
        let session = try session(code, requestorID: context.requestorID)
        guard session.username != nil else { return [:] }
        let key = Self.profileKey(session.deviceID, session.requestorID, session.mvpdID)
        guard let stored = profiles[key], clock.now() < stored.notAfter else { return [:] }
        return [session.mvpdID: v2Profile(stored, mvpdID: session.mvpdID)]
    }

    /// `GET profiles/{mvpd}`: the device's profile with the MVPD (TempPass and degraded ones are
    /// issued on the spot; an expired TempPass is a 403).
    func profile(_ context: RequestContext, mvpd: String) throws(V2EnhancedError) -> [String: V2Profile] {
        let provider = try provider(context, mvpd)
        let now = clock.now()
        if provider.tempPass {
            let ends = try tempPassWindow(context, provider)
            let guid = "temppass_" + Hex.encode(Array(SHA256.hash("temppass/" + context.deviceID).prefix(8)))
            let profile = V2Profile(
                notBefore: now, notAfter: ends, issuer: "Adobe", kind: .temporary,
                attributes: ["userID": .init(value: .string(guid)), "expiration_date": .init(value: .int(ends.milliseconds))])
            return [mvpd: profile]
        }
        if provider.degraded {
            let guid = "95cf93bcd183214a" + Hex.encode(Array(SHA256.hash("degraded/" + context.deviceID).prefix(8)))
            let profile = V2Profile(
                notBefore: now, notAfter: now.adding(provider.authenticationTTL), issuer: "Adobe", kind: .degraded,
                attributes: ["userID": .init(value: .string(guid))])
            return [mvpd: profile]
        }
        let key = Self.profileKey(context.deviceID, context.requestorID, mvpd)
        guard let stored = profiles[key], now < stored.notAfter else { return [:] }
        return [mvpd: v2Profile(stored, mvpdID: mvpd)]
    }

    /// `GET profiles`: every valid profile of the device for the requestor, including single
    /// sign-on — another requestor's profile on this device with an MVPD that allows it (the end
    /// is shared) — and passive authentication for an MVPD that authenticates per requestor,
    /// while the MVPD's own session on the device is open. Never a TempPass of another requestor.
    func allProfiles(_ context: RequestContext) throws(V2EnhancedError) -> [String: V2Profile] {
        let requestor = try requestor(context)
        let now = clock.now()
        var found: [String: V2Profile] = [:]
        for mvpdID in requestor.mvpdIDs {
            guard let provider = world.provider(mvpdID), !provider.tempPass, !provider.degraded else { continue }
            let key = Self.profileKey(context.deviceID, context.requestorID, mvpdID)
            if let own = profiles[key], now < own.notAfter {
                found[mvpdID] = v2Profile(own, mvpdID: mvpdID)
                continue
            }
            if provider.perRequestor {
                guard let session = mvpdSessions[context.deviceID + "|" + mvpdID], now < session.ends,
                    world.user(session.username) != nil
                else { continue }
                let passive = Profile(
                    username: session.username, kind: .regular, notBefore: now, notAfter: now.adding(provider.authenticationTTL))
                profiles[key] = passive
                found[mvpdID] = v2Profile(passive, mvpdID: mvpdID)
                continue
            }
            let shared = profiles.filter { entry in
                entry.key.hasPrefix(context.deviceID + "|") && entry.key.hasSuffix("|" + mvpdID) && now < entry.value.notAfter
                    && (entry.value.kind == .regular || entry.value.kind == .appleSSO)
            }
            if var other = shared.values.max(by: { $0.notAfter < $1.notAfter }) {
                other.kind = .regular
                profiles[key] = other
                found[mvpdID] = v2Profile(other, mvpdID: mvpdID)
            }
        }
        return found
    }

    /// A stored profile in V2's shape: the user's id and metadata as attributes.
    func v2Profile(_ stored: Profile, mvpdID: String) -> V2Profile {
        var attributes: [String: V2Profile.Attribute] = [:]
        if let user = world.user(stored.username) {
            for (name, value) in user.metadata {
                let json: JSONValue =
                    switch value {
                    case .text(let text): .string(text)
                    case .list(let items): .array(items.map(JSONValue.string))
                    }
                attributes[name] = V2Profile.Attribute(value: json, encrypted: user.encryptedMetadata.contains(name))
            }
            attributes["userID"] = V2Profile.Attribute(value: .string(user.userID))
        }
        let issuer = stored.kind == .appleSSO ? "Apple" : mvpdID
        return V2Profile(
            notBefore: stored.notBefore, notAfter: stored.notAfter, issuer: issuer, kind: stored.kind, attributes: attributes,
            sessionID: stored.sessionID)
    }

    // MARK: - TempPass

    /// This device's TempPass window with the MVPD: opened by its first use and lasting the MVPD's
    /// authentication TTL; after it, `temporary_access_duration_limit_exceeded` (403,
    /// `authentication`) until ``resetTempPass(deviceID:)``.
    func tempPassWindow(_ context: RequestContext, _ provider: SimulatedWorld.Provider) throws(V2EnhancedError) -> Timestamp {
        let key = "\(context.requestorID)|\(provider.id)|\(context.deviceID)"
        let now = clock.now()
        let ends = tempPasses[key] ?? now.adding(provider.authenticationTTL)
        guard now < ends else {
            throw Self.refusal(
                403, "temporary_access_duration_limit_exceeded", "The temporary access duration limit has been exceeded.",
                .authentication)
        }
        tempPasses[key] = ends
        return ends
    }

    /// Lets `deviceID` use its TempPasses again (Adobe's reset-TempPass management call).
    package func resetTempPass(deviceID: String) {
        tempPasses = tempPasses.filter { !$0.key.hasSuffix("|" + deviceID) }
    }

    // MARK: - Platform (partner) single sign-on

    /// The platform's signed statement that `username` signed in on `deviceID` (what a device's
    /// TV-provider account hands over), answering the partner's `request` (an assertion that answers
    /// none is refused, as one replayed from elsewhere); valid for ``SimulatedWorld/assertionTTL``.
    package func platformAssertion(username: String, deviceID: String, answering request: V2PartnerRequest?) -> PlatformAssertion? {
        guard let user = world.user(username) else { return nil }
        var payload: [String: JSONValue] = [
            "mvpd": .string(user.mvpdID), "user": .string(username), "device": .string(deviceID),
            "expires": .int(clock.now().adding(world.assertionTTL).milliseconds),
            "nonce": .string(Base64URL.encode(random.bytes(12))),
        ]
        if let request { payload["inResponseTo"] = .string(request.request) }
        let bytes = JSONValue.object(payload).canonicalBytes
        let serialized = "vsa." + Base64URL.encode(bytes) + "."
            + Base64URL.encode(HMACSHA256.authenticationCode(for: bytes, key: world.platformKey))
        remember(serialized)
        return PlatformAssertion(mvpdID: user.mvpdID, serialized: serialized)
    }

    /// `POST profiles/sso/{partner}`: verifies the platform's assertion (signature, expiry, device,
    /// MVPD, and that it answers a partner request issued to this device and not expired) and saves an
    /// `appleSSO` profile for it.
    func partnerProfile(_ context: RequestContext, _ assertion: PlatformAssertion) throws(V2EnhancedError)
        -> [String: V2Profile]
    {
        let invalid = Self.refusal(400, "invalid_parameter_saml_response", "The partner's SAML response is not valid here.")
        let parts = assertion.serialized.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "vsa", let payload = Base64URL.decode(String(parts[1])),
            let signature = Base64URL.decode(String(parts[2])),
            HMACSHA256.isValid(signature, for: payload, key: world.platformKey),
            let claims = try? JSONReader.read(Array(payload)),
            let mvpdID = claims["mvpd"]?.string, let username = claims["user"]?.string,
            let deviceID = claims["device"]?.string, let expires = claims["expires"]?.int,
            clock.now() < Timestamp(milliseconds: expires), deviceID == context.deviceID,
            assertion.mvpdID.isEmpty || mvpdID == assertion.mvpdID,  // on the wire only the SAMLResponse travels
            let user = world.user(username), user.mvpdID == mvpdID,
            let answered = claims["inResponseTo"]?.string, let request = partnerRequests[answered],
            request.deviceID == context.deviceID, clock.now() < request.expires
        else { throw invalid }
        let provider = try provider(context, mvpdID)
        guard provider.platformSSO else { throw invalid }
        let now = clock.now()
        let stored = Profile(
            username: username, kind: .appleSSO, notBefore: now, notAfter: now.adding(provider.authenticationTTL),
            sessionID: trackingID("sid."))
        profiles[Self.profileKey(context.deviceID, context.requestorID, mvpdID)] = stored
        return [mvpdID: v2Profile(stored, mvpdID: mvpdID)]
    }
}

// MARK: - Handing the service's state over

extension Simulator {
    /// The sessions, profiles and partner requests this service holds, as JSON: two simulators of one world act as
    /// one service when the state of one is handed to the other (two processes sharing a device's
    /// storage must also share the service, as two nodes share Adobe's).
    package func exportedState() -> String {
        var sessionsJSON: [String: JSONValue] = [:]
        for (code, session) in sessions {
            var members: [String: JSONValue] = [
                "requestor": .string(session.requestorID), "device": .string(session.deviceID), "mvpd": .string(session.mvpdID),
                "domain": .string(session.domainName), "notAfter": .int(session.notAfter.milliseconds),
                "sessionID": .string(session.sessionID),
            ]
            if let redirect = session.redirectURL { members["redirect"] = .string(redirect) }
            if let user = session.username { members["user"] = .string(user) }
            sessionsJSON[code] = .object(members)
        }
        var profilesJSON: [String: JSONValue] = [:]
        for (key, profile) in profiles {
            var members: [String: JSONValue] = [
                "user": .string(profile.username), "kind": .string(profile.kind.rawValue),
                "notBefore": .int(profile.notBefore.milliseconds), "notAfter": .int(profile.notAfter.milliseconds),
            ]
            if let sessionID = profile.sessionID { members["sessionID"] = .string(sessionID) }
            profilesJSON[key] = .object(members)
        }
        let requestsJSON = partnerRequests.mapValues { request -> JSONValue in
            ["device": .string(request.deviceID), "expires": .int(request.expires.milliseconds)]
        }
        return JSONValue.object([
            "sessions": .object(sessionsJSON), "profiles": .object(profilesJSON), "partnerRequests": .object(requestsJSON),
        ]).canonicalText
    }

    /// Adds the sessions, profiles and partner requests of ``exportedState()`` to this service; false (nothing added)
    /// when `text` is not such a state.
    @discardableResult
    package func importState(_ text: String) -> Bool {
        guard let state = try? JSONReader.read(text), let sessionsJSON = state["sessions"]?.object,
            let profilesJSON = state["profiles"]?.object
        else { return false }
        var newSessions: [String: Session] = [:]
        for (code, value) in sessionsJSON {
            guard let requestor = value["requestor"]?.string, let device = value["device"]?.string,
                let mvpd = value["mvpd"]?.string, let domain = value["domain"]?.string, let notAfter = value["notAfter"]?.int,
                let sessionID = value["sessionID"]?.string
            else { return false }
            newSessions[code] = Session(
                requestorID: requestor, deviceID: device, mvpdID: mvpd, domainName: domain, redirectURL: value["redirect"]?.string,
                notAfter: Timestamp(milliseconds: notAfter), sessionID: sessionID, username: value["user"]?.string)
        }
        var newProfiles: [String: Profile] = [:]
        for (key, value) in profilesJSON {
            guard let user = value["user"]?.string, let kind = value["kind"]?.string.flatMap(V2Profile.Kind.init(rawValue:)),
                let notBefore = value["notBefore"]?.int, let notAfter = value["notAfter"]?.int
            else { return false }
            newProfiles[key] = Profile(
                username: user, kind: kind, notBefore: Timestamp(milliseconds: notBefore),
                notAfter: Timestamp(milliseconds: notAfter), sessionID: value["sessionID"]?.string)
        }
        var newRequests: [String: (deviceID: String, expires: Timestamp)] = [:]
        for (request, value) in state["partnerRequests"]?.object ?? [:] {
            guard let device = value["device"]?.string, let expires = value["expires"]?.int else { return false }
            newRequests[request] = (device, Timestamp(milliseconds: expires))
        }
        sessions.merge(newSessions) { $1 }
        profiles.merge(newProfiles) { $1 }
        partnerRequests.merge(newRequests) { $1 }
        return true
    }
}
