/// What every backend request carries: who asks, from which device, with which options.
package struct RequestContext: Sendable, Hashable, Codable {
    /// The requestor id: REST API V2's `serviceProvider`.
    package var requestorID: String
    /// The streaming device's id (`AP-Device-Identifier`).
    package var deviceID: String
    /// The options set with `setOptions` (sent on every call, as AccessEnabler does).
    package var options: [String: String]

    /// Creates a request context.
    package init(requestorID: String, deviceID: String, options: [String: String] = [:]) {
        self.requestorID = requestorID
        self.deviceID = deviceID
        self.options = options
    }
}

/// One request to the backend port: a REST API V2 operation, made on behalf of one device
/// (Adobe's REST API V2 APIs: configuration, sessions, profiles, decisions, logout). ``v2`` is the
/// transport-independent request a V2 client sends.
package enum BackendRequest: Sendable, Hashable {
    /// `GET /api/v2/{sp}/configuration`: the requestor's MVPDs.
    case configuration(RequestContext)
    /// `POST /api/v2/{sp}/sessions`: start a login. Parameters the device cannot supply are left
    /// out (a second screen supplies its own `redirectUrl`; the answer is then `resume`).
    case createSession(RequestContext, mvpd: String, domainName: String?, redirectURL: String?)
    /// `POST /api/v2/{sp}/sessions/{code}`: resume a session the service answered `resume` to, with
    /// the parameters it lacked (all the engine has, so nothing is missing twice).
    case resumeSession(RequestContext, code: String, mvpd: String, domainName: String?, redirectURL: String?)
    /// `GET /api/v2/{sp}/sessions/{code}`: what a session holds and until when its code is valid — asked
    /// when a poll of a second-screen code is refused, to tell an expired code from a pending one.
    case session(RequestContext, code: String)
    /// `POST /api/v2/{sp}/sessions/sso/{partner}`: the request the platform's framework answers with its
    /// signed sign-in (partner single sign-on, cookbook D), asked before the platform is.
    case partnerSession(RequestContext, partner: String, domainName: String?, redirectURL: String)
    /// `GET /api/v2/{sp}/profiles`: every valid profile of the device (single sign-on at `setRequestor`).
    case profiles(RequestContext)
    /// `GET /api/v2/{sp}/profiles/{mvpd}`: the device's profile with one MVPD.
    case profile(RequestContext, mvpd: String)
    /// `GET /api/v2/{sp}/profiles/code/{code}`: the profile a session's login made (read after the
    /// redirect; polled by a second-screen login).
    case profileByCode(RequestContext, code: String)
    /// `POST /api/v2/{sp}/profiles/sso/{partner}`: the platform's signed sign-in (`SAMLResponse`)
    /// exchanged for a profile (partner single sign-on, cookbook D).
    case partnerProfile(RequestContext, partner: String, assertion: PlatformAssertion)
    /// `POST /api/v2/{sp}/decisions/authorize/{mvpd}` for one resource: the decision carries the media token.
    case authorize(RequestContext, mvpd: String, resource: String)
    /// `POST /api/v2/{sp}/decisions/preauthorize/{mvpd}`: decisions without media tokens.
    case preauthorize(RequestContext, mvpd: String, resources: [String])
    /// `GET /api/v2/{sp}/logout/{mvpd}?redirectUrl=…`: the service deletes the profile and says how
    /// the MVPD's own logout goes on.
    case logout(RequestContext, mvpd: String, redirectURL: String)

    /// The request's operation name (for logs, faults and transcripts).
    package var operation: BackendOperation {
        switch self {
        case .configuration: .configuration
        case .createSession: .createSession
        case .resumeSession: .resumeSession
        case .session: .session
        case .partnerSession: .partnerSession
        case .profiles: .profiles
        case .profile: .profile
        case .profileByCode: .profileByCode
        case .partnerProfile: .partnerProfile
        case .authorize: .authorize
        case .preauthorize: .preauthorize
        case .logout: .logout
        }
    }

    /// Who asks.
    package var context: RequestContext {
        switch self {
        case .configuration(let context), .createSession(let context, _, _, _), .resumeSession(let context, _, _, _, _),
            .session(let context, _), .partnerSession(let context, _, _, _), .profiles(let context),
            .profile(let context, _), .profileByCode(let context, _), .partnerProfile(let context, _, _),
            .authorize(let context, _, _), .preauthorize(let context, _, _), .logout(let context, _, _):
            context
        }
    }

    /// The REST API V2 request this operation is on the wire.
    package var v2: V2Request {
        let sp = context.requestorID
        switch self {
        case .configuration: return .configuration(serviceProvider: sp)
        case .createSession(_, let mvpd, let domainName, let redirectURL):
            return .createSession(serviceProvider: sp, mvpd: mvpd, domainName: domainName, redirectURL: redirectURL)
        case .resumeSession(_, let code, let mvpd, let domainName, let redirectURL):
            return .resumeSession(serviceProvider: sp, code: code, mvpd: mvpd, domainName: domainName, redirectURL: redirectURL)
        case .session(_, let code): return .session(serviceProvider: sp, code: code)
        case .partnerSession(_, let partner, let domainName, let redirectURL):
            return .partnerSession(serviceProvider: sp, partner: partner, domainName: domainName, redirectURL: redirectURL)
        case .profiles: return .profiles(serviceProvider: sp)
        case .profile(_, let mvpd): return .profile(serviceProvider: sp, mvpd: mvpd)
        case .profileByCode(_, let code): return .profileByCode(serviceProvider: sp, code: code)
        case .partnerProfile(_, let partner, let assertion):
            return .partnerProfile(serviceProvider: sp, partner: partner, samlResponse: assertion.serialized)
        case .authorize(_, let mvpd, let resource): return .authorize(serviceProvider: sp, mvpd: mvpd, resources: [resource])
        case .preauthorize(_, let mvpd, let resources):
            return .preauthorize(serviceProvider: sp, mvpd: mvpd, resources: resources)
        case .logout(_, let mvpd, let redirectURL): return .logout(serviceProvider: sp, mvpd: mvpd, redirectURL: redirectURL)
        }
    }
}

/// The backend operations, by name (REST API V2's).
public enum BackendOperation: String, Sendable, Hashable, Codable, CaseIterable {
    /// `GET configuration`.
    case configuration
    /// `POST sessions`.
    case createSession
    /// `POST sessions/{code}`.
    case resumeSession
    /// `GET sessions/{code}`.
    case session
    /// `POST sessions/sso/{partner}`.
    case partnerSession
    /// `GET profiles`.
    case profiles
    /// `GET profiles/{mvpd}`.
    case profile
    /// `GET profiles/code/{code}`.
    case profileByCode
    /// `POST profiles/sso/{partner}`.
    case partnerProfile
    /// `POST decisions/authorize/{mvpd}`.
    case authorize
    /// `POST decisions/preauthorize/{mvpd}`.
    case preauthorize
    /// `GET logout/{mvpd}`.
    case logout
}

/// A backend answer, as REST API V2's value types.
package enum BackendResponse: Sendable, Hashable {
    /// The requestor's configuration.
    case configuration(V2Configuration)
    /// A session: what to do next to log in.
    case session(V2Session)
    /// A session's status: what it holds and lacks, and its code's validity.
    case sessionStatus(V2SessionStatus)
    /// Profiles by MVPD id (possibly none).
    case profiles([String: V2Profile])
    /// Authorization or pre-authorization decisions, one per resource (a denial is an item error).
    case decisions([V2Decision])
    /// The logout's next step, by MVPD id.
    case logouts([String: V2Logout])
}

/// A requestor's configuration, as the engine keeps it: its MVPDs in picker order.
package struct RequestorConfiguration: Sendable, Hashable, Codable {
    /// The requestor id.
    package var requestorID: String
    /// The MVPDs this requestor works with, in picker order.
    package var mvpds: [MVPD]

    /// Creates a configuration.
    package init(requestorID: String, mvpds: [MVPD]) {
        self.requestorID = requestorID
        self.mvpds = mvpds
    }

    /// The configuration REST API V2 answered.
    package init(_ v2: V2Configuration) {
        self.init(
            requestorID: v2.requestorID,
            mvpds: v2.mvpds.map { mvpd in
                MVPD(
                    id: mvpd.id, displayName: mvpd.displayName, logoURL: mvpd.logoURL ?? "",
                    enablePlatformServices: mvpd.enablePlatformServices, isTempPass: mvpd.isTempPass,
                    authenticationPerRequestor: mvpd.authPerAggregator)
            })
    }
}
