/// A typed failure from the backend, so the machine can classify it as AuthN, AuthZ or other.
///
/// A struct with an opaque ``Code`` (as async-http-client's and valkey-swift's errors are): a new kind
/// of failure does not break a backend's or an app's `switch`. Make one with the static members
/// (`.timeout`, `.httpStatus(503, "…")`, `.denied(code:message:)`, …) and read it by ``code``.
public struct BackendError: Error, Sendable, Hashable, Codable {
    /// What kind of failure it is.
    public struct Code: Sendable, Hashable, Codable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// The connection failed.
        public static let network = Code("network")
        /// The backend did not answer in time.
        public static let timeout = Code("timeout")
        /// An HTTP status the port could not map to anything more specific (``BackendError/status``).
        public static let httpStatus = Code("httpStatus")
        /// Throttled (HTTP 429): retry after ``BackendError/retryAfterSeconds``.
        public static let throttled = Code("throttled")
        /// The service asked for the request to be sent again (an enhanced error with `action: retry`);
        /// the engine does so at most twice, then reports it like a network error.
        public static let retryable = Code("retryable")
        /// The answer could not be understood.
        public static let malformedResponse = Code("malformedResponse")
        /// The service no longer knows the authentication (an enhanced error with `action:
        /// authentication`: the profile is missing, expired or invalidated).
        public static let authenticationRequired = Code("authenticationRequired")
        /// A denial with its code (``BackendError/denialCode``) and the partner's words (``BackendError/message``).
        public static let denied = Code("denied")
        /// The answer came, but the token store could not hold what it changed (it refused the save, or
        /// was away past ``EngineSettings/storageRetryWindow``): the answer counts as not received, so no
        /// instance sharing the store tells the device something the others do not know.
        public static let storageUnavailable = Code("storageUnavailable")
        /// The client's credentials cannot be used: the store holds what this version cannot read (damaged,
        /// another format, sealed with another key). Nothing is registered over them: someone must look.
        public static let clientCredentials = Code("clientCredentials")

        /// The code's name (`timeout`, `httpStatus`, …).
        public var description: String { name }
    }

    /// What kind of failure it is.
    public var code: Code
    /// Why, in words (for a denial: the partner's words; empty when there are none).
    public var message: String
    /// The HTTP status, for ``Code/httpStatus``.
    public var status: Int?
    /// How long to wait, for ``Code/throttled``.
    public var retryAfterSeconds: Int?
    /// The denial's code (`authorization_denied_by_mvpd`, …), for ``Code/denied``.
    public var denialCode: String?

    private init(_ code: Code, _ message: String = "", status: Int? = nil, retryAfterSeconds: Int? = nil, denialCode: String? = nil) {
        self.code = code
        self.message = message
        self.status = status
        self.retryAfterSeconds = retryAfterSeconds
        self.denialCode = denialCode
    }

    /// The connection failed.
    public static func network(_ why: String) -> BackendError { BackendError(.network, why) }
    /// The backend did not answer in time.
    public static let timeout = BackendError(.timeout)
    /// An HTTP status the port could not map to anything more specific.
    public static func httpStatus(_ status: Int, _ why: String) -> BackendError { BackendError(.httpStatus, why, status: status) }
    /// Throttled (HTTP 429); retry after this many seconds.
    public static func throttled(retryAfterSeconds: Int) -> BackendError { BackendError(.throttled, retryAfterSeconds: retryAfterSeconds) }
    /// The service asked for the request to be sent again.
    public static func retryable(_ why: String) -> BackendError { BackendError(.retryable, why) }
    /// The answer could not be understood.
    public static func malformedResponse(_ why: String) -> BackendError { BackendError(.malformedResponse, why) }
    /// The service no longer knows the authentication.
    public static func authenticationRequired(_ why: String) -> BackendError { BackendError(.authenticationRequired, why) }
    /// A denial with its code and the partner's words.
    public static func denied(code: String, message: String) -> BackendError { BackendError(.denied, message, denialCode: code) }
    /// The token store could not hold what the answer changed.
    public static func storageUnavailable(_ why: String) -> BackendError { BackendError(.storageUnavailable, why) }
    /// The stored client credentials cannot be used (`why` says where and what).
    public static func clientCredentials(_ why: String) -> BackendError { BackendError(.clientCredentials, why) }

    /// A sentence for `tokenRequestFailed` descriptions and `status` messages.
    public var summary: String {
        switch code {
        case .network: "network error: \(message)"
        case .timeout: "the backend timed out"
        case .httpStatus: message.isEmpty ? "HTTP \(status ?? 0)" : "HTTP \(status ?? 0): \(message)"
        case .throttled: "throttled; retry after \(retryAfterSeconds ?? 0) s"
        case .retryable: "the service asked to retry: \(message)"
        case .malformedResponse: "malformed backend response: \(message)"
        case .authenticationRequired: "authentication required: \(message)"
        case .denied: "\(denialCode ?? ""): \(message)"
        case .storageUnavailable: "the token store could not save the answer: \(message)"
        case .clientCredentials: "the client credentials cannot be used: \(message)"
        default: message.isEmpty ? code.description : "\(code): \(message)"
        }
    }
}
