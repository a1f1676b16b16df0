/// One profile of `GET /api/v2/{sp}/profiles[/{mvpd}|/code/{code}]`: an authentication, its
/// validity, who issued it and the user's attributes. The answer is a map of them by MVPD id
/// (``V2Profile/profiles(json:)``), possibly empty.
package struct V2Profile: Sendable, Hashable {
    /// How the profile came to be.
    package enum Kind: V2OpenValue {
        /// A login at the MVPD.
        case regular
        /// Degraded access (issuer `Adobe`).
        case degraded
        /// TempPass (issuer `Adobe`).
        case temporary
        /// Apple's partner single sign-on.
        case appleSSO
        /// A platform's single sign-on.
        case platformSSO
        /// A service token's single sign-on.
        case serviceTokenSSO
        /// A type this engine does not know, kept as sent. Default: read as a regular MVPD login, with the
        /// profile's own expiry.
        case other(String)

        /// The values this engine knows.
        package static let known: [Self] = [.regular, .degraded, .temporary, .appleSSO, .platformSSO, .serviceTokenSSO]

        /// The wire spelling.
        package var rawValue: String {
            switch self {
            case .regular: "regular"
            case .degraded: "degraded"
            case .temporary: "temporary"
            case .appleSSO: "appleSSO"
            case .platformSSO: "platformSSO"
            case .serviceTokenSSO: "serviceTokenSSO"
            case .other(let value): value
            }
        }
    }

    /// One user attribute: its value and whether it is encrypted with the programmer's certificate.
    package struct Attribute: Sendable, Hashable {
        /// The value (a string, a number, a list or a map).
        package var value: JSONValue
        /// Whether `value` is encrypted (`enc`) or plain; a `state` this engine does not know is read as
        /// encrypted, so a value of unknown form is never shown as plain text.
        package var encrypted: Bool

        /// Creates an attribute.
        package init(value: JSONValue, encrypted: Bool = false) {
            self.value = value
            self.encrypted = encrypted
        }
    }

    /// When the authentication started.
    package var notBefore: Timestamp
    /// When it ends (the authentication TTL).
    package var notAfter: Timestamp
    /// Who issued it: the MVPD id, or `Adobe` (degraded, temporary), or `Apple`.
    package var issuer: String
    /// How it came to be.
    package var kind: Kind
    /// The user's attributes (`userID` always; `zip`, `householdID`, … by MVPD).
    package var attributes: [String: Attribute]
    /// The session that made it, if given.
    package var sessionID: String?

    /// Creates a profile.
    package init(
        notBefore: Timestamp, notAfter: Timestamp, issuer: String, kind: Kind, attributes: [String: Attribute],
        sessionID: String? = nil
    ) {
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.issuer = issuer
        self.kind = kind
        self.attributes = attributes
        self.sessionID = sessionID
    }

    /// Reads the `{"profiles": {mvpd: profile, …}}` answer (the map may be empty).
    package static func profiles(json: JSONValue) throws(V2DecodingError) -> [String: V2Profile] {
        var profiles: [String: V2Profile] = [:]
        for (mvpd, object) in try V2Object(json).objectMap("profiles") { profiles[mvpd] = try V2Profile(object) }
        return profiles
    }

    /// Writes a profiles answer.
    package static func json(profiles: [String: V2Profile]) -> JSONValue { ["profiles": .object(profiles.mapValues(\.json))] }

    init(_ object: V2Object) throws(V2DecodingError) {
        var attributes: [String: Attribute] = [:]
        for (name, attribute) in try object.objectMap("attributes") {
            guard let value = attribute.members["value"] else { throw V2DecodingError(path: attribute.at("value"), reason: "missing") }
            attributes[name] = Attribute(value: value, encrypted: (try attribute.optionalString("state") ?? "plain") != "plain")
        }
        self.init(
            notBefore: try object.time("notBefore"), notAfter: try object.time("notAfter"), issuer: try object.string("issuer"),
            kind: try object.openValue("type"), attributes: attributes, sessionID: try object.optionalString("sessionId"))
    }

    /// The profile as V2 writes it.
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "notBefore": .int(notBefore.milliseconds), "notAfter": .int(notAfter.milliseconds), "issuer": .string(issuer),
            "type": .string(kind.rawValue),
            "attributes": .object(attributes.mapValues { ["value": $0.value, "state": .string($0.encrypted ? "enc" : "plain")] }),
        ]
        members.set("sessionId", sessionID.map(JSONValue.string))
        return .object(members)
    }
}
