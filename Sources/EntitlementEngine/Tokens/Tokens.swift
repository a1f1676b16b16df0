/// The authentication token the backend issues for a device, requestor and MVPD.
public struct AuthenticationToken: Sendable, Hashable, Codable {
    /// The opaque token value (a secret).
    public var value: String
    /// The MVPD that authenticated the user.
    public var mvpdID: String
    /// The requestor the token was issued for.
    public var requestorID: String
    /// The MVPD's (anonymised) user id; only its hash reaches tracking data.
    public var userID: String
    /// When the token stops being valid.
    public var expires: Timestamp
    /// How the user signed in: a logout of a platform sign-in must also tell the user to sign
    /// out of the platform (VSA203).
    public var source: AuthenticationSource

    /// Creates an authentication token.
    public init(
        value: String, mvpdID: String, requestorID: String, userID: String, expires: Timestamp,
        source: AuthenticationSource = .mvpdLogin
    ) {
        self.value = value
        self.mvpdID = mvpdID
        self.requestorID = requestorID
        self.userID = userID
        self.expires = expires
        self.source = source
    }

    private enum CodingKeys: String, CodingKey { case value, mvpdID, requestorID, userID, expires, source }

    /// Decodes a token; files written before `source` existed read as ``AuthenticationSource/mvpdLogin``.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        value = try container.decode(String.self, forKey: .value)
        mvpdID = try container.decode(String.self, forKey: .mvpdID)
        requestorID = try container.decode(String.self, forKey: .requestorID)
        userID = try container.decode(String.self, forKey: .userID)
        expires = try container.decode(Timestamp.self, forKey: .expires)
        source = try container.decodeIfPresent(AuthenticationSource.self, forKey: .source) ?? .mvpdLogin
    }
}

/// How an authentication token was obtained.
public enum AuthenticationSource: String, Sendable, Hashable, Codable {
    /// The MVPD's own login page, through the redirect (cookbook C).
    case mvpdLogin
    /// The platform's TV-provider account, through its signed assertion (cookbook D).
    case platformSSO
    /// A TempPass pseudo-MVPD: a limited time per device, no login.
    case tempPass
}

/// The authorization token for one resource; never outlives its authentication.
public struct AuthorizationToken: Sendable, Hashable, Codable {
    /// The opaque token value (a secret).
    public var value: String
    /// The resource it authorizes.
    public var resource: String
    /// When the token stops being valid.
    public var expires: Timestamp

    /// Creates an authorization token.
    public init(value: String, resource: String, expires: Timestamp) {
        self.value = value
        self.resource = resource
        self.expires = expires
    }
}

/// A short-lived media token: never cached, fetched fresh for every authorization.
public struct MediaToken: Sendable, Hashable, Codable {
    /// The serialized token handed to `setToken` (a secret).
    public var serialized: String
    /// The resource it unlocks.
    public var resource: String
    /// When it expires.
    public var expires: Timestamp

    /// Creates a media token.
    public init(serialized: String, resource: String, expires: Timestamp) {
        self.serialized = serialized
        self.resource = resource
        self.expires = expires
    }
}

/// A login waiting for its redirect, kept in storage so that another engine instance (or this one
/// after a restart) can complete it. Holds secrets: storage must be private.
public struct PendingLogin: Sendable, Hashable, Codable {
    /// The MVPD chosen for the login.
    public var mvpdID: String
    /// The flow's `state`.
    public var state: String
    /// The flow's PKCE verifier.
    public var verifier: String
    /// When the redirect must have arrived by.
    public var deadline: Timestamp
    /// The `data` given to `getAuthentication`.
    public var data: [String: String]

    /// Creates a pending login.
    public init(mvpdID: String, state: String, verifier: String, deadline: Timestamp, data: [String: String] = [:]) {
        self.mvpdID = mvpdID
        self.state = state
        self.verifier = verifier
        self.deadline = deadline
        self.data = data
    }
}

/// Everything the engine keeps for one device and requestor between sessions.
public struct StoredTokens: Sendable, Hashable, Codable {
    /// The authentication token, if any.
    public var authentication: AuthenticationToken?
    /// Authorization tokens by resource.
    public var authorizations: [String: AuthorizationToken]
    /// The MVPD the user chose last (skips the picker next time), if any.
    public var selectedProvider: String?
    /// The device the tokens were stored for; tokens of another device are cleared (SEC412).
    public var deviceID: String?
    /// A login waiting for its redirect, if any.
    public var pendingLogin: PendingLogin?

    /// Creates a token set.
    public init(
        authentication: AuthenticationToken? = nil, authorizations: [String: AuthorizationToken] = [:],
        selectedProvider: String? = nil, deviceID: String? = nil, pendingLogin: PendingLogin? = nil
    ) {
        self.authentication = authentication
        self.authorizations = authorizations
        self.selectedProvider = selectedProvider
        self.deviceID = deviceID
        self.pendingLogin = pendingLogin
    }

    /// True when nothing but (at most) the device is stored.
    public var holdsNothing: Bool {
        authentication == nil && authorizations.isEmpty && selectedProvider == nil && pendingLogin == nil
    }

    /// No tokens.
    public static let empty = StoredTokens()
}
