/// One decision of `POST /api/v2/{sp}/decisions/authorize/{mvpd}` or `…/preauthorize/{mvpd}`.
/// A denial is a decision with `authorized` false and an ``V2EnhancedError`` (HTTP 200).
package struct V2Decision: Sendable, Hashable {
    /// Who decided.
    package enum Source: V2OpenValue {
        /// The MVPD.
        case mvpd
        /// A degradation rule.
        case degradation
        /// TempPass.
        case temppass
        /// A test integration.
        case dummy
        /// A source this engine does not know, kept as sent. Default: like ``mvpd`` — the token is handed out
        /// with no degraded or TempPass status.
        case other(String)

        /// The values this engine knows.
        package static let known: [Self] = [.mvpd, .degradation, .temppass, .dummy]

        /// The wire spelling.
        package var rawValue: String {
            switch self {
            case .mvpd: "mvpd"
            case .degradation: "degradation"
            case .temppass: "temppass"
            case .dummy: "dummy"
            case .other(let value): value
            }
        }
    }

    /// The media token an authorize decision carries (never cached, one use).
    package struct Token: Sendable, Hashable {
        /// When it becomes valid.
        package var notBefore: Timestamp
        /// When it expires (7 minutes by default).
        package var notAfter: Timestamp
        /// The serialized media token handed to `setToken` (a secret).
        package var serialized: String

        /// Creates a token.
        package init(notBefore: Timestamp, notAfter: Timestamp, serialized: String) {
            self.notBefore = notBefore
            self.notAfter = notAfter
            self.serialized = serialized
        }
    }

    /// The resource decided on.
    package var resource: String
    /// The requestor.
    package var serviceProvider: String
    /// The MVPD.
    package var mvpd: String
    /// Whether the user may watch it.
    package var authorized: Bool
    /// Who decided.
    package var source: Source
    /// The media token (authorize permits only).
    package var token: Token?
    /// When the decision was made, if given.
    package var notBefore: Timestamp?
    /// Until when Adobe reuses it (the authorization TTL), if given.
    package var notAfter: Timestamp?
    /// Why it was denied (or could not be decided).
    package var error: V2EnhancedError?

    /// Creates a decision.
    package init(
        resource: String, serviceProvider: String, mvpd: String, authorized: Bool, source: Source, token: Token? = nil,
        notBefore: Timestamp? = nil, notAfter: Timestamp? = nil, error: V2EnhancedError? = nil
    ) {
        self.resource = resource
        self.serviceProvider = serviceProvider
        self.mvpd = mvpd
        self.authorized = authorized
        self.source = source
        self.token = token
        self.notBefore = notBefore
        self.notAfter = notAfter
        self.error = error
    }

    /// Reads the `{"decisions": […]}` answer.
    package static func decisions(json: JSONValue) throws(V2DecodingError) -> [V2Decision] {
        var decisions: [V2Decision] = []
        for object in try V2Object(json).objects("decisions") { decisions.append(try V2Decision(object)) }
        return decisions
    }

    /// Writes a decisions answer.
    package static func json(decisions: [V2Decision]) -> JSONValue { ["decisions": .array(decisions.map(\.json))] }

    init(_ object: V2Object) throws(V2DecodingError) {
        var token: Token?
        if let item = try object.optionalObject("token") {
            token = Token(
                notBefore: try item.time("notBefore"), notAfter: try item.time("notAfter"), serialized: try item.string("serializedToken"))
        }
        self.init(
            resource: try object.string("resource"), serviceProvider: try object.string("serviceProvider"),
            mvpd: try object.string("mvpd"), authorized: try object.bool("authorized"), source: try object.openValue("source"),
            token: token, notBefore: try object.optionalTime("notBefore"), notAfter: try object.optionalTime("notAfter"),
            error: try object.optionalObject("error").map { (item: V2Object) throws(V2DecodingError) in try V2EnhancedError(item) })
    }

    /// The decision as V2 writes it.
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "resource": .string(resource), "serviceProvider": .string(serviceProvider), "mvpd": .string(mvpd),
            "authorized": .bool(authorized), "source": .string(source.rawValue),
        ]
        members.set(
            "token",
            token.map { ["notBefore": .int($0.notBefore.milliseconds), "notAfter": .int($0.notAfter.milliseconds), "serializedToken": .string($0.serialized)] })
        members.set("notBefore", notBefore.map { .int($0.milliseconds) })
        members.set("notAfter", notAfter.map { .int($0.milliseconds) })
        members.set("error", error?.json)
        return .object(members)
    }
}
