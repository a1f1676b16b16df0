/// An authentication, as the engine keeps it: REST API V2's profile for this device, requestor and
/// MVPD (Adobe's REST API V2 profiles APIs). The profile lives on the service; this is the engine's local copy, so
/// `checkAuthentication` and metadata need no request. It holds no bearer secret of its own.
public struct AuthenticationToken: Sendable, Hashable, Codable {
    /// The token's fields, in one box: a token is copied wherever the machine reads its state (a step, a
    /// save, a snapshot), and a copy is then one reference, not one per string; the saved copy and the
    /// state's share their storage, and two tokens from one box compare equal without reading it.
    private var fields: CopyOnWrite<Fields>

    /// What a token holds (hashed in this order).
    private struct Fields: Sendable, Hashable {
        var mvpdID: String
        var requestorID: String
        var userID: String
        var expires: Timestamp
        var source: AuthenticationSource
        var packedMetadata: PackedMetadata
        var encryptedMetadata: Set<String>
        var sessionID: String?
    }

    /// The MVPD that authenticated the user.
    public var mvpdID: String {
        get { fields.value.mvpdID }
        set { fields.value.mvpdID = newValue }
    }
    /// The requestor the profile is for.
    public var requestorID: String {
        get { fields.value.requestorID }
        set { fields.value.requestorID = newValue }
    }
    /// The MVPD's (anonymised) user id (the profile's `userID`); only its hash reaches tracking data.
    public var userID: String {
        get { fields.value.userID }
        set { fields.value.userID = newValue }
    }
    /// When the profile stops being valid (its `notAfter`).
    public var expires: Timestamp {
        get { fields.value.expires }
        set { fields.value.expires = newValue }
    }
    /// How the user signed in (the profile's `type`): a logout of a platform sign-in must also tell
    /// the user to sign out of the platform (VSA203).
    public var source: AuthenticationSource {
        get { fields.value.source }
        set { fields.value.source = newValue }
    }
    /// The profile's attributes (`userID` too), as `getMetadata` answers them.
    public var metadata: [String: MetadataValue] {
        get { packedMetadata.dictionary }
        set { packedMetadata = PackedMetadata(newValue) }
    }
    /// ``metadata``, as the token keeps it: packed in one byte array (a session host keeps very many).
    var packedMetadata: PackedMetadata {
        get { fields.value.packedMetadata }
        set { fields.value.packedMetadata = newValue }
    }
    /// The names of the attributes whose value is encrypted (`state: enc`).
    public var encryptedMetadata: Set<String> {
        get { fields.value.encryptedMetadata }
        set { fields.value.encryptedMetadata = newValue }
    }
    /// The service's id of the login that made the profile (its `sessionId`), when it gives one.
    public var sessionID: String? {
        get { fields.value.sessionID }
        set { fields.value.sessionID = newValue }
    }

    /// Whether `other` comes from the same login: the same MVPD, user, service session and expiry (a
    /// profile read again, or saved again by another instance, is: Adobe fixes a profile's `notAfter` when
    /// the user logs in; a login made after a logout is not, even by the same user with no session id:
    /// its validity runs from a later instant).
    package func isSameLogin(as other: AuthenticationToken) -> Bool {
        mvpdID == other.mvpdID && userID == other.userID && sessionID == other.sessionID && expires == other.expires
    }

    /// Creates an authentication.
    public init(
        mvpdID: String, requestorID: String, userID: String, expires: Timestamp, source: AuthenticationSource = .mvpdLogin,
        metadata: [String: MetadataValue] = [:], encryptedMetadata: Set<String> = [], sessionID: String? = nil
    ) {
        self.init(
            mvpdID: mvpdID, requestorID: requestorID, userID: userID, expires: expires, source: source,
            packedMetadata: PackedMetadata(metadata), encryptedMetadata: encryptedMetadata, sessionID: sessionID)
    }

    /// Creates an authentication whose attributes are packed already.
    private init(
        mvpdID: String, requestorID: String, userID: String, expires: Timestamp, source: AuthenticationSource,
        packedMetadata: PackedMetadata, encryptedMetadata: Set<String>, sessionID: String?
    ) {
        fields = CopyOnWrite(
            Fields(
                mvpdID: mvpdID, requestorID: requestorID, userID: userID, expires: expires, source: source,
                packedMetadata: packedMetadata, encryptedMetadata: encryptedMetadata, sessionID: sessionID))
    }

    /// Equal tokens: one box, or equal fields.
    public static func == (lhs: AuthenticationToken, rhs: AuthenticationToken) -> Bool {
        lhs.fields.sharesStorage(with: rhs.fields) || lhs.fields.value == rhs.fields.value
    }

    /// Hashes the fields (as the token hashed them when they were its own).
    public func hash(into hasher: inout Hasher) { fields.value.hash(into: &hasher) }

    private enum CodingKeys: String, CodingKey {
        case mvpdID, requestorID, userID, expires, source, metadata, encryptedMetadata, sessionID
    }

    /// Decodes an authentication; what earlier versions stored without a source or attributes
    /// reads as an MVPD login without metadata (their opaque `value` is ignored).
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            mvpdID: try container.decode(String.self, forKey: .mvpdID),
            requestorID: try container.decode(String.self, forKey: .requestorID),
            userID: try container.decode(String.self, forKey: .userID),
            expires: try container.decode(Timestamp.self, forKey: .expires),
            source: try container.decodeIfPresent(AuthenticationSource.self, forKey: .source) ?? .mvpdLogin,
            packedMetadata: PackedMetadata(try container.decodeIfPresent([String: MetadataValue].self, forKey: .metadata) ?? [:]),
            encryptedMetadata: try container.decodeIfPresent(Set<String>.self, forKey: .encryptedMetadata) ?? [],
            sessionID: try container.decodeIfPresent(String.self, forKey: .sessionID))
    }

    /// Encodes an authentication: every field under its name, the attributes as an object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mvpdID, forKey: .mvpdID)
        try container.encode(requestorID, forKey: .requestorID)
        try container.encode(userID, forKey: .userID)
        try container.encode(expires, forKey: .expires)
        try container.encode(source, forKey: .source)
        try container.encode(metadata, forKey: .metadata)
        try container.encode(encryptedMetadata, forKey: .encryptedMetadata)
        try container.encodeIfPresent(sessionID, forKey: .sessionID)
    }

    /// The authentication a V2 profile describes, for `requestorID` (nil when it has no `userID`).
    package init?(profile: V2Profile, mvpdID: String, requestorID: String) {
        guard let userID = profile.attributes["userID"].flatMap({ Self.metadataValue($0.value) }), case .text(let id) = userID
        else { return nil }
        // The attributes packed straight from the profile's, with no dictionary between.
        var entries: [(key: String, value: MetadataValue)] = []
        entries.reserveCapacity(profile.attributes.count)
        var encrypted: Set<String> = []
        for (name, attribute) in profile.attributes {
            if let value = Self.metadataValue(attribute.value) { entries.append((name, value)) }
            if attribute.encrypted { encrypted.insert(name) }
        }
        let source: AuthenticationSource =
            switch profile.kind {
            case .regular: .mvpdLogin
            case .temporary: .tempPass
            case .degraded: .degraded
            case .appleSSO, .platformSSO, .serviceTokenSSO: .platformSSO
            // A type Adobe added: the profile is still an authentication the service vouches for, with its own expiry.
            case .other: .mvpdLogin
            }
        self.init(
            mvpdID: mvpdID, requestorID: requestorID, userID: id, expires: profile.notAfter, source: source,
            packedMetadata: PackedMetadata(entries: entries), encryptedMetadata: encrypted, sessionID: profile.sessionID)
    }

    /// An attribute value as metadata: text, a list of texts, or (numbers, maps) its JSON text.
    static func metadataValue(_ value: JSONValue) -> MetadataValue? {
        switch value {
        case .string(let text): return .text(text)
        case .null: return nil
        case .array(let items):
            let texts = items.compactMap { item -> String? in if case .string(let text) = item { text } else { nil } }
            return texts.count == items.count ? .list(texts) : .text(value.canonicalText)
        default: return .text(value.canonicalText)
        }
    }
}

/// How an authentication was obtained (the V2 profile's `type`).
public enum AuthenticationSource: String, Sendable, Hashable, Codable {
    /// The MVPD's own login page, through a session (cookbook C; profile type `regular`).
    case mvpdLogin
    /// The platform's TV-provider account (cookbook D; `appleSSO`, `platformSSO`, `serviceTokenSSO`).
    case platformSSO
    /// A TempPass pseudo-MVPD: a limited time per device, no login (`temporary`).
    case tempPass
    /// Degraded access while the MVPD is down (`degraded`, issuer `Adobe`).
    case degraded
}

/// A login waiting for its redirect, kept in storage so that another engine instance (or this one
/// after a restart) can complete it. Holds secrets: storage must be private.
package struct PendingLogin: Sendable, Hashable, Codable {
    /// The MVPD chosen for the login.
    package var mvpdID: String
    /// The flow's `state`.
    package var state: String
    /// The session's code: the profile the login makes is read by it (a secret).
    package var code: String
    /// When the redirect must have arrived by.
    package var deadline: Timestamp
    /// The `data` given to `getAuthentication`.
    package var data: [String: String]
    /// The MVPD's login page the device was sent to (a secret: it carries the session's code), so any
    /// instance can send the device there again; nil in a login an earlier version saved.
    package var url: String?
    /// Whether an instance accepted the login's redirect and is reading its profile: no instance
    /// accepts the redirect again, and the others wait for the outcome (a token, or nothing pending).
    package var completing: Bool

    /// Creates a pending login.
    package init(
        mvpdID: String, state: String, code: String, deadline: Timestamp, data: [String: String] = [:], url: String? = nil,
        completing: Bool = false
    ) {
        self.mvpdID = mvpdID
        self.state = state
        self.code = code
        self.deadline = deadline
        self.data = data
        self.url = url
        self.completing = completing
    }

    private enum CodingKeys: String, CodingKey {
        case mvpdID, state, code, deadline, data, url, completing
    }

    /// Decodes a pending login; one saved without `completing` is waiting for its redirect.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        mvpdID = try container.decode(String.self, forKey: .mvpdID)
        state = try container.decode(String.self, forKey: .state)
        code = try container.decode(String.self, forKey: .code)
        deadline = try container.decode(Timestamp.self, forKey: .deadline)
        data = try container.decode([String: String].self, forKey: .data)
        url = try container.decodeIfPresent(String.self, forKey: .url)
        completing = try container.decodeIfPresent(Bool.self, forKey: .completing) ?? false
    }

    /// Encodes the pending login; `completing` only when set, so other files read as before.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(mvpdID, forKey: .mvpdID)
        try container.encode(state, forKey: .state)
        try container.encode(code, forKey: .code)
        try container.encode(deadline, forKey: .deadline)
        try container.encode(data, forKey: .data)
        try container.encodeIfPresent(url, forKey: .url)
        if completing { try container.encode(true, forKey: .completing) }
    }
}

/// A second-screen login's registration code, kept in storage while the device shows it, so an engine
/// started again (the TV app restarted) or another instance goes on polling it until it expires: the
/// user may finish on the phone at any time. The code is a secret.
package struct PendingRegistration: Sendable, Hashable, Codable {
    /// The MVPD chosen for the login.
    package var mvpdID: String
    /// The registration code (the session's code).
    package var code: String
    /// When the code stops being polled.
    package var expires: Timestamp

    /// Creates a pending registration.
    package init(mvpdID: String, code: String, expires: Timestamp) {
        self.mvpdID = mvpdID
        self.code = code
        self.expires = expires
    }
}

/// A logout waiting for the MVPD's logout redirect, kept in storage so that any instance sharing the
/// store (another node of a fleet) can complete it when the redirect reaches it.
package struct PendingLogout: Sendable, Hashable, Codable {
    /// The logout flow's `state` (a secret): the redirect must carry it.
    package var state: String
    /// When the redirect must have arrived by.
    package var deadline: Timestamp
    /// The MVPD logged out of on the service.
    package var mvpdID: String?

    /// Creates a pending logout.
    package init(state: String, deadline: Timestamp, mvpdID: String? = nil) {
        self.state = state
        self.deadline = deadline
        self.mvpdID = mvpdID
    }
}

/// Everything the engine keeps for one device and requestor between sessions.
public struct StoredTokens: Sendable, Hashable, Codable {
    /// The authentication token, if any.
    public var authentication: AuthenticationToken?
    /// The MVPD the user chose last (skips the picker next time), if any.
    public var selectedProvider: String?
    /// The device the tokens were stored for; tokens of another device are cleared (SEC412).
    public var deviceID: String?
    /// A login waiting for its redirect, if any.
    package var pendingLogin: PendingLogin?
    /// A logout waiting for the MVPD's logout redirect, if any.
    package var pendingLogout: PendingLogout?
    /// A second-screen code being shown, if any.
    package var pendingRegistration: PendingRegistration?
    /// What the user holds with each provider of the chain that signs in (by provider id): its user
    /// token and the credentials kept for good.
    public var providerAccounts: [String: ProviderAccount]
    /// Authorizations waiting for the app's step-up, or whose step-up just ended (``PendingStepUp``).
    package var pendingStepUps: [PendingStepUp]
    /// With a provider chain, when the device last logged out (each mark later than the one it replaced):
    /// a node holding a request from before it ends the request as its own logout would, also when
    /// nothing else in the store changed (a device with no TV-provider sign-in). Kept while a request
    /// from before it can still be in flight, dropped by the first save after that.
    package var loggedOut: Timestamp?

    /// Creates a token set.
    package init(
        authentication: AuthenticationToken? = nil, selectedProvider: String? = nil, deviceID: String? = nil, pendingLogin: PendingLogin? = nil,
        pendingLogout: PendingLogout? = nil, providerAccounts: [String: ProviderAccount] = [:],
        pendingRegistration: PendingRegistration? = nil, pendingStepUps: [PendingStepUp] = [], loggedOut: Timestamp? = nil
    ) {
        self.authentication = authentication
        self.selectedProvider = selectedProvider
        self.deviceID = deviceID
        self.pendingLogin = pendingLogin
        self.pendingLogout = pendingLogout
        self.pendingRegistration = pendingRegistration
        self.providerAccounts = providerAccounts
        self.pendingStepUps = pendingStepUps
        self.loggedOut = loggedOut
    }

    private enum CodingKeys: String, CodingKey {
        case authentication, selectedProvider, deviceID, pendingLogin, pendingLogout, providerAccounts, pendingRegistration, pendingStepUps, loggedOut
    }

    /// Encodes the tokens; a pending logout and provider accounts only when there are some, so other
    /// files read as before.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(authentication, forKey: .authentication)
        try container.encodeIfPresent(selectedProvider, forKey: .selectedProvider)
        try container.encodeIfPresent(deviceID, forKey: .deviceID)
        try container.encodeIfPresent(pendingLogin, forKey: .pendingLogin)
        try container.encodeIfPresent(pendingLogout, forKey: .pendingLogout)
        try container.encodeIfPresent(pendingRegistration, forKey: .pendingRegistration)
        if !providerAccounts.isEmpty { try container.encode(providerAccounts, forKey: .providerAccounts) }
        if !pendingStepUps.isEmpty { try container.encode(pendingStepUps, forKey: .pendingStepUps) }
        try container.encodeIfPresent(loggedOut, forKey: .loggedOut)
    }

    /// Decodes stored tokens. A pending login an earlier version saved (with a PKCE verifier and no
    /// session code) cannot be completed any more: it is dropped, and the rest of the file is kept. So are
    /// step-ups this version cannot read (a later version's): a call waiting for one ends at its own deadline.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        authentication = try container.decodeIfPresent(AuthenticationToken.self, forKey: .authentication)
        selectedProvider = try container.decodeIfPresent(String.self, forKey: .selectedProvider)
        deviceID = try container.decodeIfPresent(String.self, forKey: .deviceID)
        pendingLogin = try? container.decodeIfPresent(PendingLogin.self, forKey: .pendingLogin)
        pendingLogout = try? container.decodeIfPresent(PendingLogout.self, forKey: .pendingLogout)
        pendingRegistration = try? container.decodeIfPresent(PendingRegistration.self, forKey: .pendingRegistration)
        providerAccounts = try container.decodeIfPresent([String: ProviderAccount].self, forKey: .providerAccounts) ?? [:]
        pendingStepUps = (try? container.decodeIfPresent([PendingStepUp].self, forKey: .pendingStepUps)) ?? []
        loggedOut = try? container.decodeIfPresent(Timestamp.self, forKey: .loggedOut)
    }

    /// True when nothing but (at most) the device is stored.
    package var holdsNothing: Bool {
        authentication == nil && selectedProvider == nil && pendingLogin == nil && pendingLogout == nil && providerAccounts.isEmpty
            && pendingRegistration == nil && pendingStepUps.isEmpty && loggedOut == nil
    }

    /// No tokens.
    public static let empty = StoredTokens()
}
