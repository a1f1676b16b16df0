/// The answer of `POST /api/v2/{sp}/sessions` (create), `…/sessions/{code}` (resume) and
/// `…/sessions/sso/{partner}`: what to do next, and the session's code and validity.
package struct V2Session: Sendable, Hashable {
    /// What the caller does next.
    package enum ActionName: V2OpenValue {
        /// Open `url` so the user logs in at the MVPD.
        case authenticate
        /// Parameters are missing: resume the session with them.
        case resume
        /// Still missing parameters (resume's answer).
        case retry
        /// A profile already exists: go straight to a decision.
        case authorize
        /// Partner (Apple) SSO: obtain a partner profile.
        case partnerProfile
        /// An action this engine does not know, kept as sent. Default: a login ends with `setAuthenticationStatus` 0
        /// naming the action and opens no page; a partner (platform) session falls back to the MVPD picker.
        case other(String)

        /// The values this engine knows.
        package static let known: [Self] = [.authenticate, .resume, .retry, .authorize, .partnerProfile]

        /// The wire spelling.
        package var rawValue: String {
            switch self {
            case .authenticate: "authenticate"
            case .resume: "resume"
            case .retry: "retry"
            case .authorize: "authorize"
            case .partnerProfile: "partner_profile"
            case .other(let value): value
            }
        }
    }

    /// How `url` is used.
    package enum ActionType: V2OpenValue {
        /// Open it in a user agent (web view or second-screen browser).
        case interactive
        /// Call it with an HTTP client.
        case direct
        /// A way this engine does not know, kept as sent. Default: ignored — the engine reads a session by its
        /// ``ActionName``.
        case other(String)

        /// The values this engine knows.
        package static let known: [Self] = [.interactive, .direct]

        /// The wire spelling.
        package var rawValue: String {
            switch self {
            case .interactive: "interactive"
            case .direct: "direct"
            case .other(let value): value
            }
        }
    }

    /// Why the action is what it is.
    package enum ReasonType: V2OpenValue {
        /// A new login.
        case none
        /// A regular profile exists.
        case authenticated
        /// A TempPass MVPD: no login needed.
        case temporary
        /// Degraded access: no login needed.
        case degraded
        /// A profile from single sign-on exists.
        case authenticatedSSO
        /// Partner SSO fell back: the partner framework status did not allow it.
        case pfsFallback
        /// Partner SSO fell back: the configuration does not allow it.
        case configurationFallback
        /// Partner SSO fell back: parameters were missing.
        case missingParametersFallback
        /// A reason this engine does not know, kept as sent. Default: only reported — the engine acts on
        /// ``ActionName``.
        case other(String)

        /// The values this engine knows.
        package static let known: [Self] = [.none, .authenticated, .temporary, .degraded, .authenticatedSSO, .pfsFallback, .configurationFallback, .missingParametersFallback]

        /// The wire spelling.
        package var rawValue: String {
            switch self {
            case .none: "none"
            case .authenticated: "authenticated"
            case .temporary: "temporary"
            case .degraded: "degraded"
            case .authenticatedSSO: "authenticatedSSO"
            case .pfsFallback: "pfs_fallback"
            case .configurationFallback: "configuration_fallback"
            case .missingParametersFallback: "missing_parameters_fallback"
            case .other(let value): value
            }
        }
    }

    /// What to do next.
    package var actionName: ActionName
    /// How to use `url`.
    package var actionType: ActionType
    /// Why.
    package var reasonType: ReasonType
    /// Parameters the session still needs (`mvpd`, `domainName`, `redirectUrl`).
    package var missingParameters: [String]?
    /// Where to go next (host-relative `/api/v2/…`), if anywhere.
    package var url: String?
    /// The session's code (also the second-screen registration code), if one was issued (a secret).
    package var code: String?
    /// Adobe's tracking id for the session.
    package var sessionID: String
    /// The MVPD, if known.
    package var mvpd: String?
    /// The requestor.
    package var serviceProvider: String
    /// When the code becomes valid (sent as a string of epoch milliseconds).
    package var notBefore: Timestamp?
    /// When the code stops being valid.
    package var notAfter: Timestamp?
    /// What to hand the partner framework (`partner_profile` answers of `sessions/sso/{partner}`).
    package var authenticationRequest: V2PartnerRequest?

    /// Creates a session answer.
    package init(
        actionName: ActionName, actionType: ActionType, reasonType: ReasonType, missingParameters: [String]? = nil,
        url: String? = nil, code: String? = nil, sessionID: String, mvpd: String? = nil, serviceProvider: String,
        notBefore: Timestamp? = nil, notAfter: Timestamp? = nil, authenticationRequest: V2PartnerRequest? = nil
    ) {
        self.actionName = actionName
        self.actionType = actionType
        self.reasonType = reasonType
        self.missingParameters = missingParameters
        self.url = url
        self.code = code
        self.sessionID = sessionID
        self.mvpd = mvpd
        self.serviceProvider = serviceProvider
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.authenticationRequest = authenticationRequest
    }

    /// Reads a session answer.
    package init(json: JSONValue) throws(V2DecodingError) {
        let object = try V2Object(json)
        self.init(
            actionName: try object.openValue("actionName"), actionType: try object.openValue("actionType"),
            reasonType: try object.openValue("reasonType"), missingParameters: try object.optionalStrings("missingParameters"),
            url: try object.optionalString("url"), code: try object.optionalString("code"), sessionID: try object.string("sessionId"),
            mvpd: try object.optionalString("mvpd"), serviceProvider: try object.string("serviceProvider"),
            notBefore: try object.optionalStringTime("notBefore"), notAfter: try object.optionalStringTime("notAfter"),
            authenticationRequest: try object.optionalObject("authenticationRequest").map { (request) throws(V2DecodingError) in
                try V2PartnerRequest(request)
            })
    }

    /// The answer as V2 writes it (times as strings, as V2 sends them).
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "actionName": .string(actionName.rawValue), "actionType": .string(actionType.rawValue),
            "reasonType": .string(reasonType.rawValue), "sessionId": .string(sessionID), "serviceProvider": .string(serviceProvider),
        ]
        members.set("missingParameters", missingParameters.map { .array($0.map(JSONValue.string)) })
        members.set("url", url.map(JSONValue.string))
        members.set("code", code.map(JSONValue.string))
        members.set("mvpd", mvpd.map(JSONValue.string))
        members.set("notBefore", notBefore.map { .string(String($0.milliseconds)) })
        members.set("notAfter", notAfter.map { .string(String($0.milliseconds)) })
        members.set("authenticationRequest", authenticationRequest?.json)
        return .object(members)
    }
}
