/// What every backend request carries: who asks, from which device, with which options.
public struct RequestContext: Sendable, Hashable, Codable {
    /// The requestor (programmer) id.
    public var requestorID: String
    /// The device id.
    public var deviceID: String
    /// The options set with `setOptions` (sent on every call, as AccessEnabler does).
    public var options: [String: String]

    /// Creates a request context.
    public init(requestorID: String, deviceID: String, options: [String: String] = [:]) {
        self.requestorID = requestorID
        self.deviceID = deviceID
        self.options = options
    }
}

/// One request to the backend port, as the machine asks for it.
public enum BackendRequest: Sendable, Hashable {
    /// Fetch the requestor's configuration.
    case configuration(requestorID: String, serviceProviders: [String], deviceID: String, options: [String: String])
    /// Exchange a one-time code (with its PKCE verifier) for an authentication token.
    case exchangeCode(CodeExchange)
    /// Exchange the platform's signed assertion for the engine's own authentication token (cookbook D).
    case exchangePlatformAssertion(RequestContext, assertion: PlatformAssertion)
    /// Start (or resume, within its window) this device's TempPass with a TempPass MVPD.
    case startTempPass(RequestContext, mvpdID: String, data: [String: String])
    /// Single sign-on: another requestor's authentication on this device, for this requestor.
    case singleSignOn(RequestContext, authentication: AuthenticationToken)
    /// Passive authentication (no UI) with an MVPD that authenticates per requestor, relying on
    /// the MVPD's own session on this device.
    case passiveAuthentication(RequestContext, mvpdID: String)
    /// A registration code for a second-screen login with `mvpdID`, usable for `lifetime`.
    case registrationCode(RequestContext, mvpdID: String, lifetime: Duration)
    /// Whether the registration code was used on a second screen: the token, or not yet.
    case checkRegistration(RequestContext, code: String)
    /// Authorize a resource.
    case authorize(RequestContext, authentication: AuthenticationToken, resource: String, data: [String: String])
    /// Obtain a fresh media token for an authorized resource.
    case mediaToken(RequestContext, authentication: AuthenticationToken, authorization: AuthorizationToken)
    /// Pre-authorize a list of resources.
    case preauthorize(RequestContext, authentication: AuthenticationToken, resources: [String])
    /// Read one user metadata value.
    case userMetadata(RequestContext, authentication: AuthenticationToken, name: String)

    /// The request's operation name (for logs, faults and transcripts).
    public var operation: BackendOperation {
        switch self {
        case .configuration: .configuration
        case .exchangeCode: .exchangeCode
        case .exchangePlatformAssertion: .exchangePlatformAssertion
        case .startTempPass: .startTempPass
        case .singleSignOn: .singleSignOn
        case .passiveAuthentication: .passiveAuthentication
        case .registrationCode: .registrationCode
        case .checkRegistration: .checkRegistration
        case .authorize: .authorize
        case .mediaToken: .mediaToken
        case .preauthorize: .preauthorize
        case .userMetadata: .userMetadata
        }
    }
}

/// The backend operations, by name.
public enum BackendOperation: String, Sendable, Hashable, Codable, CaseIterable {
    /// Requestor configuration.
    case configuration
    /// Code exchange.
    case exchangeCode
    /// Platform-assertion exchange.
    case exchangePlatformAssertion
    /// TempPass start.
    case startTempPass
    /// Single sign-on across requestors.
    case singleSignOn
    /// Passive authentication.
    case passiveAuthentication
    /// Registration code for a second screen.
    case registrationCode
    /// Second-screen poll.
    case checkRegistration
    /// Authorization.
    case authorize
    /// Media token.
    case mediaToken
    /// Pre-authorization.
    case preauthorize
    /// User metadata.
    case userMetadata
}

/// The code-exchange request (RFC 6749 §4.1.3 with RFC 7636 PKCE).
public struct CodeExchange: Sendable, Hashable, Codable {
    /// Who asks.
    public var context: RequestContext
    /// The MVPD chosen for the flow.
    public var mvpdID: String
    /// The one-time code from the redirect (a secret).
    public var code: String
    /// The PKCE verifier drawn for the flow (a secret).
    public var codeVerifier: String
    /// The redirect URL the flow used (must match the one given at login).
    public var redirectURL: String
    /// The `data` passed to `getAuthentication`, forwarded to the server.
    public var data: [String: String]

    /// Creates a code-exchange request.
    public init(
        context: RequestContext, mvpdID: String, code: String, codeVerifier: String, redirectURL: String,
        data: [String: String] = [:]
    ) {
        self.context = context
        self.mvpdID = mvpdID
        self.code = code
        self.codeVerifier = codeVerifier
        self.redirectURL = redirectURL
        self.data = data
    }
}

/// A backend answer, as the machine receives it.
public enum BackendResponse: Sendable, Hashable {
    /// The requestor's configuration.
    case configuration(RequestorConfiguration)
    /// A new authentication token.
    case authenticated(AuthenticationToken)
    /// An authorization token.
    case authorized(AuthorizationToken)
    /// A media token.
    case mediaToken(MediaToken)
    /// Pre-authorization decisions, one per resource.
    case preauthorized([PreauthorizationDecision])
    /// A user metadata value (nil when the MVPD has none by that name).
    case userMetadata(MetadataValue?, encrypted: Bool)
    /// A registration code for a second-screen login.
    case registrationCode(RegistrationCode)
    /// The registration code has not been used on a second screen yet.
    case registrationPending
}

/// The outcome for one resource of a pre-authorization.
public struct PreauthorizationDecision: Sendable, Hashable, Codable {
    /// The resource.
    public var resource: String
    /// Whether the user may watch it.
    public var authorized: Bool
    /// Why no decision could be made for this item (the rest of the answer still counts).
    public var error: String?

    /// Creates a decision.
    public init(resource: String, authorized: Bool, error: String? = nil) {
        self.resource = resource
        self.authorized = authorized
        self.error = error
    }
}

/// A requestor's configuration: its MVPDs and the service provider's login and logout endpoints.
public struct RequestorConfiguration: Sendable, Hashable, Codable {
    /// The requestor id.
    public var requestorID: String
    /// The MVPDs this requestor works with, in picker order.
    public var mvpds: [MVPD]
    /// The service provider's authentication endpoint the login URL is built on.
    public var authenticationEndpoint: String
    /// The service provider's logout endpoint.
    public var logoutEndpoint: String

    /// Creates a configuration.
    public init(requestorID: String, mvpds: [MVPD], authenticationEndpoint: String, logoutEndpoint: String) {
        self.requestorID = requestorID
        self.mvpds = mvpds
        self.authenticationEndpoint = authenticationEndpoint
        self.logoutEndpoint = logoutEndpoint
    }
}
