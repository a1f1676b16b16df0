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

    /// Creates an authentication token.
    public init(value: String, mvpdID: String, requestorID: String, userID: String, expires: Timestamp) {
        self.value = value
        self.mvpdID = mvpdID
        self.requestorID = requestorID
        self.userID = userID
        self.expires = expires
    }
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

    /// Creates a token set.
    public init(
        authentication: AuthenticationToken? = nil, authorizations: [String: AuthorizationToken] = [:],
        selectedProvider: String? = nil, deviceID: String? = nil
    ) {
        self.authentication = authentication
        self.authorizations = authorizations
        self.selectedProvider = selectedProvider
        self.deviceID = deviceID
    }

    /// True when nothing but (at most) the device is stored.
    public var holdsNothing: Bool { authentication == nil && authorizations.isEmpty && selectedProvider == nil }

    /// No tokens.
    public static let empty = StoredTokens()
}
