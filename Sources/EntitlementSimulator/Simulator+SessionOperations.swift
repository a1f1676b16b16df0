import EntitlementEngine

/// The V2 operations the engine's port does not carry, which a second screen or another client uses: a
/// session created without an MVPD, its status, its resumption with the parameters it lacked (REST API
/// V2 §4.1–4.3), a partner single sign-on session (§8), and decisions for several resources in one request.
extension Simulator {
    /// The parameters a session needs before its login can start, in the order the answer lists them.
    private static func missingParameters(mvpd: String, domainName: String, redirectURL: String?) -> [String] {
        (mvpd.isEmpty ? ["mvpd"] : []) + (domainName.isEmpty ? ["domainName"] : []) + (redirectURL == nil ? ["redirectUrl"] : [])
    }

    /// `POST sessions` without an MVPD (a device that lets a second screen pick it): `resume`, direct, with
    /// the code and what is missing; the login starts when the session is resumed with it.
    public func createSessionWithoutMVPD(_ context: RequestContext, domainName: String?, redirectURL: String?)
        throws(V2EnhancedError) -> V2Session
    {
        _ = try requestor(context)
        if let redirectURL, !Self.isRedirectURL(redirectURL) {
            throw Self.refusal(400, "invalid_parameter_redirect_url", "The redirect URL is not a URL.")
        }
        forgetSessions(replacedFor: context)
        let code = sessionCode()
        let now = clock.now()
        let session = Session(
            requestorID: context.requestorID, deviceID: context.deviceID, mvpdID: "", domainName: domainName ?? "",
            redirectURL: redirectURL, notAfter: now.adding(world.sessionTTL), sessionID: trackingID("sid."))
        sessions[code] = session
        return V2Session(
            actionName: .resume, actionType: .direct, reasonType: .none,
            missingParameters: Self.missingParameters(mvpd: "", domainName: session.domainName, redirectURL: redirectURL),
            url: "\(world.serviceProvider)/api/v2/\(context.requestorID)/sessions/\(code)", code: code, sessionID: session.sessionID,
            serviceProvider: context.requestorID, notBefore: now, notAfter: session.notAfter)
    }

    /// `GET sessions/{code}`: what the session holds and lacks, and its validity (the second screen
    /// checks a typed code with it before opening the login).
    public func sessionStatus(requestorID: String, code: String) throws(V2EnhancedError) -> JSONValue {
        let session = try session(code, requestorID: requestorID)
        var existing: [String: JSONValue] = ["serviceProvider": .string(session.requestorID)]
        if !session.mvpdID.isEmpty { existing["mvpd"] = .string(session.mvpdID) }
        if !session.domainName.isEmpty { existing["domainName"] = .string(session.domainName) }
        if let redirect = session.redirectURL { existing["redirectUrl"] = .string(redirect) }
        let missing = Self.missingParameters(mvpd: session.mvpdID, domainName: session.domainName, redirectURL: session.redirectURL)
        return [
            "existingParameters": .object(existing), "missingParameters": .array(missing.map(JSONValue.string)),
            "device": ["applicationId": .string(session.requestorID)],
            "notBefore": .string(String(session.notAfter.adding(.zero - world.sessionTTL).milliseconds)),
            "notAfter": .string(String(session.notAfter.milliseconds)),
        ]
    }

    /// `POST sessions/{code}`: the session resumed with the parameters it lacked (given ones replace
    /// none already there): `authenticate` with the same code when nothing is missing any more, `retry`
    /// with what still is, `authorize` for an MVPD that needs no login.
    public func resumeSession(requestorID: String, code: String, mvpd: String?, domainName: String?, redirectURL: String?)
        throws(V2EnhancedError) -> V2Session
    {
        var session = try session(code, requestorID: requestorID)
        let context = RequestContext(requestorID: requestorID, deviceID: session.deviceID)
        if session.mvpdID.isEmpty, let mvpd { session.mvpdID = mvpd }
        if session.domainName.isEmpty, let domainName { session.domainName = domainName }
        if session.redirectURL == nil, let redirectURL {
            guard Self.isRedirectURL(redirectURL) else {
                throw Self.refusal(400, "invalid_parameter_redirect_url", "The redirect URL is not a URL.")
            }
            session.redirectURL = redirectURL
        }
        if !session.mvpdID.isEmpty {
            let provider = try provider(context, session.mvpdID)
            if provider.tempPass || provider.degraded {
                sessions[code] = nil
                return V2Session(
                    actionName: .authorize, actionType: .direct, reasonType: provider.tempPass ? .temporary : .degraded,
                    url: "\(world.serviceProvider)/api/v2/\(requestorID)/decisions/authorize/\(session.mvpdID)", code: code,
                    sessionID: session.sessionID, mvpd: session.mvpdID, serviceProvider: requestorID)
            }
        }
        sessions[code] = session
        let missing = Self.missingParameters(mvpd: session.mvpdID, domainName: session.domainName, redirectURL: session.redirectURL)
        let notBefore = session.notAfter.adding(.zero - world.sessionTTL)
        guard missing.isEmpty else {
            return V2Session(
                actionName: .retry, actionType: .direct, reasonType: .none, missingParameters: missing,
                url: "\(world.serviceProvider)/api/v2/\(requestorID)/sessions/\(code)", code: code, sessionID: session.sessionID,
                mvpd: session.mvpdID.isEmpty ? nil : session.mvpdID, serviceProvider: requestorID, notBefore: notBefore,
                notAfter: session.notAfter)
        }
        return V2Session(
            actionName: .authenticate, actionType: .interactive, reasonType: .none, url: authenticateURL(requestorID, code), code: code,
            sessionID: session.sessionID, mvpd: session.mvpdID, serviceProvider: requestorID, notBefore: notBefore,
            notAfter: session.notAfter)
    }

    /// `POST decisions/authorize/{mvpd}` for several resources at once (the contract takes an array; the
    /// engine asks for one at a time): a decision per resource, in order.
    public func authorize(_ context: RequestContext, mvpd: String, resourcesAtOnce resources: [String]) throws(V2EnhancedError) -> [V2Decision] {
        try authorize(context, mvpd: mvpd, resources: resources)
    }

    /// `POST sessions/sso/{partner}` (Apple's single sign-on, REST API V2 §8): `partner_profile`, direct,
    /// with the SAML request the partner framework is handed (`authenticationRequest`) and where to
    /// post its answer (`profiles/sso/{partner}`). Only the `apple` partner is known.
    public func partnerSession(_ context: RequestContext, partner: String, domainName: String, redirectURL: String)
        throws(V2EnhancedError) -> JSONValue
    {
        _ = try requestor(context)
        guard partner == "apple" else {
            throw Self.refusal(400, "invalid_parameter_partner", "The partner '\(partner.prefix(32))' is not known.")
        }
        guard Self.isRedirectURL(redirectURL) else {
            throw Self.refusal(400, "invalid_parameter_redirect_url", "The redirect URL is not a URL.")
        }
        let request = "<samlp:AuthnRequest xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\" ID=\"\(trackingID("req."))\" "
            + "Version=\"2.0\" IssueInstant=\"\(clock.now().milliseconds)\"/>"
        let session = V2Session(
            actionName: .partnerProfile, actionType: .direct, reasonType: .none,
            url: "\(world.serviceProvider)/api/v2/\(context.requestorID)/profiles/sso/\(partner)", sessionID: trackingID("sid."),
            serviceProvider: context.requestorID)
        guard case .object(var members) = session.json else { return session.json }
        members["authenticationRequest"] = [
            "type": "saml", "request": .string(Base64.encode(Array(request.utf8))), "attributesNames": ["userID", "upstreamUserID"],
        ]
        return .object(members)
    }
}
