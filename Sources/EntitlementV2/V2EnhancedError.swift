/// An enhanced error of REST API V2: the whole body of an error answer, or the `error` of one
/// decision. `action` says what the engine does about it.
public struct V2EnhancedError: Error, Sendable, Hashable {
    /// What to do about an error.
    public enum Action: V2OpenValue {
        /// Nothing can be done: report it.
        case none
        /// The integration is misconfigured: report it.
        case configuration
        /// The client registration or access token is not valid: register or refresh.
        case applicationRegistration
        /// Authenticate again.
        case authentication
        /// The authorization was refused (with the MVPD's message).
        case authorization
        /// Try again (at most twice, with backoff).
        case retry
        /// An action this engine does not know, kept as sent. Default: like ``none`` — the error is reported
        /// with its status, and a `…_denied_…` code is a denial.
        case other(String)

        /// The wire value.
        public var rawValue: String {
            switch self {
            case .none: "none"
            case .configuration: "configuration"
            case .applicationRegistration: "application-registration"
            case .authentication: "authentication"
            case .authorization: "authorization"
            case .retry: "retry"
            case .other(let value): value
            }
        }

        /// The values this engine knows.
        public static let known: [Self] = [.none, .configuration, .applicationRegistration, .authentication, .authorization, .retry]
    }

    /// The HTTP-like status (it may differ from the answer's HTTP status).
    public var status: Int64
    /// The code, from a finite set (`authorization_denied_by_mvpd`, …).
    public var code: String
    /// A sentence for people.
    public var message: String
    /// The partner's own text (an MVPD's denial message), if any.
    public var details: String?
    /// Where to read more, if given.
    public var helpURL: String?
    /// Adobe's support trace id, if given.
    public var trace: String?
    /// What to do; absent means `Action.none`.
    public var action: Action

    /// Creates an error.
    public init(
        status: Int64, code: String, message: String, details: String? = nil, helpURL: String? = nil, trace: String? = nil,
        action: Action = .none
    ) {
        self.status = status
        self.code = code
        self.message = message
        self.details = details
        self.helpURL = helpURL
        self.trace = trace
        self.action = action
    }

    /// Reads an error object.
    package init(json: JSONValue) throws(V2DecodingError) { try self.init(V2Object(json)) }

    init(_ object: V2Object) throws(V2DecodingError) {
        self.init(
            status: try object.int("status"), code: try object.string("code"), message: try object.optionalString("message") ?? "",
            details: try object.optionalString("details"), helpURL: try object.optionalString("helpUrl"),
            trace: try object.optionalString("trace"), action: Action(rawValue: try object.optionalString("action") ?? "none"))
    }

    /// The error as V2 writes it.
    package var json: JSONValue {
        var members: [String: JSONValue] = ["status": .int(status), "code": .string(code), "message": .string(message)]
        members.set("details", details.map(JSONValue.string))
        members.set("helpUrl", helpURL.map(JSONValue.string))
        members.set("trace", trace.map(JSONValue.string))
        members["action"] = .string(action.rawValue)
        return .object(members)
    }
}
