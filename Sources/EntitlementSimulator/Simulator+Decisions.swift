import EntitlementEngine
import EntitlementSupport

/// Decisions: authorization with a signed media token, pre-authorization without one. A denial is
/// an item error under HTTP 200; a missing or expired profile is a top-level 403 (`authentication`).
extension Simulator {
    /// Who a decision is for: a subscriber, a TempPass (every resource of the requestor) or
    /// degraded access (everything permitted).
    enum Viewer {
        case user(SimulatedWorld.User)
        case tempPass
        case degraded
    }

    /// The viewer behind the device's profile with `mvpdID`, or the 403 that sends the engine back
    /// to authentication.
    func viewer(_ context: RequestContext, _ mvpdID: String) throws(V2EnhancedError) -> Viewer {
        let provider = try provider(context, mvpdID)
        if provider.degraded { return .degraded }
        if provider.tempPass {
            _ = try tempPassWindow(context, provider)
            return .tempPass
        }
        let key = Self.profileKey(context.deviceID, context.requestorID, mvpdID)
        guard let stored = profiles[key] else {
            throw Self.refusal(403, "authenticated_profile_missing", "The authenticated profile is missing.", .authentication)
        }
        guard clock.now() < stored.notAfter else {
            throw Self.refusal(403, "authenticated_profile_expired", "The authenticated profile has expired.", .authentication)
        }
        guard let user = world.user(stored.username) else {
            throw Self.refusal(403, "authenticated_profile_invalidated", "The authenticated profile was invalidated.", .authentication)
        }
        return .user(user)
    }

    /// Nil when `viewer` may watch `resource`, else the item's error (`code` is the MVPD's denial).
    func denial(_ viewer: Viewer, _ resource: String, _ context: RequestContext, code: String) -> V2EnhancedError? {
        let deny = { (details: String) in
            Self.refusal(403, code, "The MVPD has returned a \"Deny\" decision when requesting authorization.", details: details)
        }
        guard world.requestor(context.requestorID)?.resources.contains(resource) == true else {
            return deny("The resource '\(resource.prefix(64))' is unknown.")
        }
        switch viewer {
        case .degraded, .tempPass: return nil
        case .user(let user):
            if let message = user.denials[resource] { return deny(message) }
            guard user.entitlements.contains(resource) else {
                return deny("Your subscription does not include '\(resource.prefix(64))'.")
            }
            return nil
        }
    }

    /// `POST decisions/authorize/{mvpd}`: one decision per resource; a permit carries a media token
    /// signed with the world's key, valid ``SimulatedWorld/mediaTokenTTL``.
    func authorize(_ context: RequestContext, mvpd: String, resources: [String]) throws(V2EnhancedError) -> [V2Decision] {
        let viewer = try viewer(context, mvpd)
        let provider = try provider(context, mvpd)
        let now = clock.now()
        let source: V2Decision.Source =
            switch viewer {
            case .user: .mvpd
            case .tempPass: .temppass
            case .degraded: .degradation
            }
        let profileKey = Self.profileKey(context.deviceID, context.requestorID, mvpd)
        return resources.map { resource in
            if case .user(let user) = viewer, user.hbaResources.contains(resource) {
                // Home-based authentication: the login this profile came from is denied once seen; a new login passes.
                let login = profiles[profileKey]?.sessionID ?? ""
                if hbaDenied[profileKey] == nil || hbaDenied[profileKey] == login {
                    hbaDenied[profileKey] = login
                    return V2Decision(
                        resource: resource, serviceProvider: context.requestorID, mvpd: mvpd, authorized: false, source: source,
                        error: Self.refusal(
                            403, "authorization_denied_by_hba_policies", "The home-based authentication policy denied the request.",
                            .authentication))
                }
            }
            if let error = denial(viewer, resource, context, code: "authorization_denied_by_mvpd") {
                return V2Decision(
                    resource: resource, serviceProvider: context.requestorID, mvpd: mvpd, authorized: false, source: source,
                    error: error)
            }
            let userID: String =
                switch viewer {
                case .user(let user): user.userID
                case .tempPass: "temppass/" + context.deviceID
                case .degraded: "degraded/" + context.deviceID
                }
            let claims = MediaTokenVerifier.Claims(
                tokenID: Base64URL.encode(random.bytes(12)),
                sessionGUID: Hex.encode(Array(SHA256.hash("\(mvpd)/\(userID)").prefix(16))), requestorID: context.requestorID,
                resourceID: resource, issued: now, timeToLive: world.mediaTokenTTL.milliseconds, mvpdID: mvpd)
            let serialized = MediaTokenVerifier.sign(claims, key: world.mediaTokenKey)
            remember(serialized)
            return V2Decision(
                resource: resource, serviceProvider: context.requestorID, mvpd: mvpd, authorized: true, source: source,
                token: V2Decision.Token(notBefore: now, notAfter: now.adding(world.mediaTokenTTL), serialized: serialized),
                notBefore: now, notAfter: now.adding(provider.authorizationTTL))
        }
    }

    /// `POST decisions/preauthorize/{mvpd}`: decisions without media tokens or windows; a denial
    /// is an item error (`preauthorization_denied_by_mvpd`), as V2 sends it.
    func preauthorize(_ context: RequestContext, mvpd: String, _ resources: [String]) throws(V2EnhancedError) -> [V2Decision] {
        let viewer = try viewer(context, mvpd)
        return resources.map { resource in
            let error = denial(viewer, resource, context, code: "preauthorization_denied_by_mvpd")
            return V2Decision(
                resource: resource, serviceProvider: context.requestorID, mvpd: mvpd, authorized: error == nil, source: .mvpd,
                error: error)
        }
    }
}
