import EntitlementSupport

/// A request to Adobe Pass REST API V2, described independently of any transport: the method, the
/// path, the query, the body and which device headers it carries (Adobe's REST API V2 APIs and header pages). The
/// HTTP client sends exactly this; the simulator answers it.
package enum V2Request: Sendable, Hashable {
    /// `POST /o/client/register`: client credentials for a software statement.
    case registerClient(softwareStatement: String, redirectURI: String?)
    /// `POST /o/client/token`: an access token for stored client credentials.
    case accessToken(clientID: String, clientSecret: String)
    /// `GET /api/v2/{sp}/configuration`.
    case configuration(serviceProvider: String)
    /// `POST /api/v2/{sp}/sessions`: start a login (parameters a device cannot supply are left out).
    case createSession(serviceProvider: String, mvpd: String?, domainName: String?, redirectURL: String?)
    /// `POST /api/v2/{sp}/sessions/{code}`: supply the parameters a session is missing.
    case resumeSession(serviceProvider: String, code: String, mvpd: String?, domainName: String?, redirectURL: String?)
    /// `GET /api/v2/{sp}/sessions/{code}`: what a session holds (second screen validates a code).
    case session(serviceProvider: String, code: String)
    /// `GET /api/v2/{sp}/profiles`: every valid profile of the device.
    case profiles(serviceProvider: String)
    /// `GET /api/v2/{sp}/profiles/{mvpd}`.
    case profile(serviceProvider: String, mvpd: String)
    /// `GET /api/v2/{sp}/profiles/code/{code}`: the profile a session's login made (polled).
    case profileByCode(serviceProvider: String, code: String)
    /// `POST /api/v2/{sp}/decisions/authorize/{mvpd}` with the resources (usually one).
    case authorize(serviceProvider: String, mvpd: String, resources: [String])
    /// `POST /api/v2/{sp}/decisions/preauthorize/{mvpd}` with the resources (usually at most five).
    case preauthorize(serviceProvider: String, mvpd: String, resources: [String])
    /// `GET /api/v2/{sp}/logout/{mvpd}?redirectUrl=…`.
    case logout(serviceProvider: String, mvpd: String, redirectURL: String)
    /// `POST /api/v2/{sp}/sessions/sso/{partner}`: partner (platform) single sign-on.
    case partnerSession(serviceProvider: String, partner: String, domainName: String?, redirectURL: String)
    /// `POST /api/v2/{sp}/profiles/sso/{partner}`: the partner's signed answer (`SAMLResponse`) for a profile.
    case partnerProfile(serviceProvider: String, partner: String, samlResponse: String)

    /// The HTTP method.
    package enum Method: String, Sendable, Hashable {
        /// `GET`.
        case get = "GET"
        /// `POST`.
        case post = "POST"
    }

    /// A request body.
    package enum Body: Sendable, Hashable {
        /// `application/x-www-form-urlencoded` fields, in order.
        case form([Field])
        /// `application/json`.
        case json(JSONValue)

        /// The `Content-Type` header for it.
        package var contentType: String {
            switch self {
            case .form: "application/x-www-form-urlencoded"
            case .json: "application/json"
            }
        }

        /// The bytes sent.
        package var bytes: [UInt8] {
            switch self {
            case .form(let fields): Array(FormCoding.encode(fields.map { ($0.name, $0.value) }).utf8)
            case .json(let value): value.canonicalBytes
            }
        }
    }

    /// One form or query field.
    package struct Field: Sendable, Hashable {
        /// The name.
        package var name: String
        /// The value.
        package var value: String

        /// Creates a field.
        package init(_ name: String, _ value: String) {
            self.name = name
            self.value = value
        }
    }

    /// Whether a device header is sent.
    package enum Presence: Sendable, Hashable {
        /// The endpoint requires it.
        case required
        /// Documented as optional: sent when the engine has it.
        case optional
        /// Not documented for this endpoint: never sent (only documented headers are sent).
        case notSent
    }

    /// The operation's name, for logs and metrics (`createSession`, `authorize`, …).
    package var operation: String {
        switch self {
        case .registerClient: "registerClient"
        case .accessToken: "accessToken"
        case .configuration: "configuration"
        case .createSession: "createSession"
        case .resumeSession: "resumeSession"
        case .session: "session"
        case .profiles: "profiles"
        case .profile: "profile"
        case .profileByCode: "profileByCode"
        case .authorize: "authorize"
        case .preauthorize: "preauthorize"
        case .logout: "logout"
        case .partnerSession: "partnerSession"
        case .partnerProfile: "partnerProfile"
        }
    }

    /// The method.
    package var method: Method {
        switch self {
        case .configuration, .session, .profiles, .profile, .profileByCode, .logout: .get
        default: .post
        }
    }

    /// The path, each segment percent-encoded.
    package var path: String {
        func api(_ serviceProvider: String, _ rest: String...) -> String {
            "/api/v2/" + ([serviceProvider] + rest).map(PercentEncoding.encode).joined(separator: "/")
        }
        switch self {
        case .registerClient: return "/o/client/register"
        case .accessToken: return "/o/client/token"
        case .configuration(let sp): return api(sp, "configuration")
        case .createSession(let sp, _, _, _): return api(sp, "sessions")
        case .resumeSession(let sp, let code, _, _, _), .session(let sp, let code): return api(sp, "sessions", code)
        case .profiles(let sp): return api(sp, "profiles")
        case .profile(let sp, let mvpd): return api(sp, "profiles", mvpd)
        case .profileByCode(let sp, let code): return api(sp, "profiles", "code", code)
        case .authorize(let sp, let mvpd, _): return api(sp, "decisions", "authorize", mvpd)
        case .preauthorize(let sp, let mvpd, _): return api(sp, "decisions", "preauthorize", mvpd)
        case .logout(let sp, let mvpd, _): return api(sp, "logout", mvpd)
        case .partnerSession(let sp, let partner, _, _): return api(sp, "sessions", "sso", partner)
        case .partnerProfile(let sp, let partner, _): return api(sp, "profiles", "sso", partner)
        }
    }

    /// The query fields.
    package var query: [Field] {
        if case .logout(_, _, let redirectURL) = self { return [Field("redirectUrl", redirectURL)] }
        return []
    }

    /// The path and its query, as sent.
    package var target: String {
        query.isEmpty ? path : path + "?" + FormCoding.encode(query.map { ($0.name, $0.value) })
    }

    /// The body, if any.
    package var body: Body? {
        func session(_ mvpd: String?, _ domainName: String?, _ redirectURL: String?) -> Body {
            .form([("mvpd", mvpd), ("domainName", domainName), ("redirectUrl", redirectURL)].compactMap { name, value in value.map { Field(name, $0) } })
        }
        switch self {
        case .registerClient(let statement, let redirectURI):
            var members: [String: JSONValue] = ["software_statement": .string(statement)]
            members.set("redirect_uri", redirectURI.map(JSONValue.string))
            return .json(.object(members))
        case .accessToken(let id, let secret):
            return .form([Field("client_id", id), Field("client_secret", secret), Field("grant_type", "client_credentials")])
        case .createSession(_, let mvpd, let domainName, let redirectURL), .resumeSession(_, _, let mvpd, let domainName, let redirectURL):
            return session(mvpd, domainName, redirectURL)
        case .partnerSession(_, _, let domainName, let redirectURL):
            return .form((domainName.map { [Field("domainName", $0)] } ?? []) + [Field("redirectUrl", redirectURL)])
        case .partnerProfile(_, _, let samlResponse):
            return .form([Field("SAMLResponse", samlResponse)])
        case .authorize(_, _, let resources), .preauthorize(_, _, let resources):
            return .json(["resources": .array(resources.map(JSONValue.string))])
        case .configuration, .session, .profiles, .profile, .profileByCode, .logout:
            return nil
        }
    }

    /// Whether `Authorization: Bearer <access token>` is sent (every `/api/v2` request).
    package var needsAccessToken: Bool {
        switch self {
        case .registerClient, .accessToken: false
        default: true
        }
    }

    /// Whether `AP-Device-Identifier` is sent (each endpoint's page in Adobe's REST API V2 APIs).
    package var deviceIdentifier: Presence {
        switch self {
        case .createSession, .profiles, .profile, .authorize, .preauthorize, .logout, .partnerSession, .partnerProfile: .required
        case .configuration: .optional
        case .registerClient, .accessToken, .resumeSession, .session, .profileByCode: .notSent
        }
    }

    /// Whether `X-Device-Info` is sent.
    package var deviceInfo: Presence {
        switch self {
        case .createSession, .profiles, .profile, .authorize, .preauthorize, .logout, .partnerSession, .partnerProfile,
            .registerClient, .accessToken:
            .required
        case .configuration: .optional
        case .resumeSession, .session, .profileByCode: .notSent
        }
    }

    /// Whether `AP-TempPass-Identity` is documented for this endpoint (profiles by MVPD and by code,
    /// decisions).
    package var acceptsTempPassIdentity: Bool {
        switch self {
        case .profile, .profileByCode, .authorize, .preauthorize: true
        default: false
        }
    }
}
