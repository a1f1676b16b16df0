import EntitlementEngine
import EntitlementSupport

/// The session operations beyond a plain login (REST API V2 §4.1–4.3, §8): a session created without some
/// of its parameters (a device that lets a second screen pick the MVPD), its status, its resumption with the
/// parameters it lacked, a partner single sign-on session — and decisions for several resources in one
/// request, which the engine's port does not carry.
extension Simulator {
    /// The parameters a session needs before its login can start, in the order the answer lists them.
    private static func missingParameters(mvpd: String, domainName: String, redirectURL: String?) -> [String] {
        (mvpd.isEmpty ? ["mvpd"] : []) + (domainName.isEmpty ? ["domainName"] : []) + (redirectURL == nil ? ["redirectUrl"] : [])
    }

    /// `POST sessions` without some of its parameters (nil or empty: not given): `resume`, direct, with the
    /// code and what is missing; the login starts when the session is resumed with it.
    package func createIncompleteSession(_ context: RequestContext, mvpd: String?, domainName: String?, redirectURL: String?)
        throws(V2EnhancedError) -> V2Session
    {
        _ = try requestor(context)
        if let mvpd, !mvpd.isEmpty { _ = try provider(context, mvpd) }
        if let redirectURL, !Self.isRedirectURL(redirectURL) {
            throw Self.refusal(400, "invalid_parameter_redirect_url", "The redirect URL is not a URL.")
        }
        forgetSessions(replacedFor: context)
        let code = sessionCode()
        let now = clock.now()
        let session = Session(
            requestorID: context.requestorID, deviceID: context.deviceID, mvpdID: mvpd ?? "", domainName: domainName ?? "",
            redirectURL: redirectURL, notAfter: now.adding(world.sessionTTL), sessionID: trackingID("sid."))
        keep(session, code: code)
        return V2Session(
            actionName: .resume, actionType: .direct, reasonType: .none,
            missingParameters: Self.missingParameters(mvpd: session.mvpdID, domainName: session.domainName, redirectURL: redirectURL),
            url: "\(world.serviceProvider)/api/v2/\(context.requestorID)/sessions/\(code)", code: code, sessionID: session.sessionID,
            serviceProvider: context.requestorID, notBefore: now, notAfter: session.notAfter)
    }

    /// The answer of a session request that did not take the parameters `names` (a fault): `POST sessions`
    /// creates the session without them (`resume`), `POST sessions/{code}` leaves the session as it was and
    /// answers `retry` with them, `POST sessions/sso/{partner}` falls back (`resume`,
    /// `missing_parameters_fallback`).
    func answerMissing(_ names: [String], _ request: BackendRequest) throws(V2EnhancedError) -> V2Session {
        func given(_ name: String, _ value: String?) -> String? { names.contains(name) ? nil : value }
        switch request {
        case .createSession(let context, let mvpd, let domainName, let redirectURL):
            return try createIncompleteSession(
                context, mvpd: given("mvpd", mvpd), domainName: given("domainName", domainName),
                redirectURL: given("redirectUrl", redirectURL))
        case .resumeSession(let context, let code, let mvpd, _, _):
            let session = try session(code, requestorID: context.requestorID)
            return V2Session(
                actionName: .retry, actionType: .direct, reasonType: .none, missingParameters: names,
                url: "\(world.serviceProvider)/api/v2/\(context.requestorID)/sessions/\(code)", code: code,
                sessionID: session.sessionID, mvpd: mvpd, serviceProvider: context.requestorID,
                notBefore: session.notAfter.adding(.zero - world.sessionTTL), notAfter: session.notAfter)
        case .partnerSession(let context, _, _, _):
            // Partner single sign-on falls back to the classic login, which the session's resumption starts.
            let session = try createIncompleteSession(context, mvpd: nil, domainName: nil, redirectURL: nil)
            return V2Session(
                actionName: .resume, actionType: .direct, reasonType: .missingParametersFallback, missingParameters: names,
                url: session.url, code: session.code, sessionID: session.sessionID, serviceProvider: context.requestorID,
                notBefore: session.notBefore, notAfter: session.notAfter)
        default:
            throw Self.refusal(400, "invalid_request", "The request lacks parameters the service needs.")
        }
    }

    /// `GET sessions/{code}`: what the session holds and lacks, and its validity (the second screen
    /// checks a typed code with it before opening the login).
    package func sessionStatus(requestorID: String, code: String) throws(V2EnhancedError) -> V2SessionStatus {
        let session = try session(code, requestorID: requestorID)
        var existing: [String: JSONValue] = ["serviceProvider": .string(session.requestorID)]
        if !session.mvpdID.isEmpty { existing["mvpd"] = .string(session.mvpdID) }
        if !session.domainName.isEmpty { existing["domainName"] = .string(session.domainName) }
        if let redirect = session.redirectURL { existing["redirectUrl"] = .string(redirect) }
        let missing = Self.missingParameters(mvpd: session.mvpdID, domainName: session.domainName, redirectURL: session.redirectURL)
        return V2SessionStatus(
            existingParameters: existing.compactMapValues(\.string), missingParameters: missing,
            notBefore: session.notAfter.adding(.zero - world.sessionTTL), notAfter: session.notAfter)
    }

    /// `POST sessions/{code}`: the session resumed with the parameters it lacked (given ones replace
    /// none already there): `authenticate` with the same code when nothing is missing any more, `retry`
    /// with what still is, `authorize` for an MVPD that needs no login.
    package func resumeSession(requestorID: String, code: String, mvpd: String?, domainName: String?, redirectURL: String?)
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
    package func authorize(_ context: RequestContext, mvpd: String, resourcesAtOnce resources: [String]) throws(V2EnhancedError) -> [V2Decision] {
        try authorize(context, mvpd: mvpd, resources: resources)
    }

    /// `POST sessions/sso/{partner}` (Apple's single sign-on, REST API V2 §8): `partner_profile`, direct,
    /// with the SAML request the partner framework is handed (`authenticationRequest`) and where to
    /// post its answer (`profiles/sso/{partner}`). Only the `Apple` partner is known (its name in any case).
    package func partnerSession(_ context: RequestContext, partner: String, domainName: String, redirectURL: String)
        throws(V2EnhancedError) -> V2Session
    {
        _ = try requestor(context)
        guard partner.lowercased() == "apple" else {
            throw Self.refusal(400, "invalid_parameter_partner", "The partner '\(partner.prefix(32))' is not known.")
        }
        guard Self.isRedirectURL(redirectURL) else {
            throw Self.refusal(400, "invalid_parameter_redirect_url", "The redirect URL is not a URL.")
        }
        let request = "<samlp:AuthnRequest xmlns:samlp=\"urn:oasis:names:tc:SAML:2.0:protocol\" ID=\"\(trackingID("req."))\" "
            + "Version=\"2.0\" IssueInstant=\"\(clock.now().milliseconds)\"/>"
        let issued = Base64.encode(Array(request.utf8))
        let now = clock.now()
        partnerRequests = partnerRequests.filter { now < $0.value.expires }
        partnerRequests[issued] = (context.deviceID, now.adding(world.assertionTTL))
        return V2Session(
            actionName: .partnerProfile, actionType: .direct, reasonType: .none,
            url: "\(world.serviceProvider)/api/v2/\(context.requestorID)/profiles/sso/\(partner)", sessionID: trackingID("sid."),
            serviceProvider: context.requestorID,
            authenticationRequest: V2PartnerRequest(
                type: "saml", request: issued, attributeNames: ["userID", "upstreamUserID"]))
    }
}
