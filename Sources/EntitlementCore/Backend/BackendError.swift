/// A typed failure from the backend, so the machine can classify it as AuthN, AuthZ or other.
public enum BackendError: Error, Sendable, Hashable, Codable {
    /// The connection failed.
    case network(String)
    /// The backend did not answer in time.
    case timeout
    /// An HTTP status the port could not map to anything more specific.
    case httpStatus(Int, String)
    /// Throttled (HTTP 429); retry after this many seconds.
    case throttled(retryAfterSeconds: Int)
    /// The service asked for the request to be sent again (an enhanced error with `action:
    /// retry`); the engine does so at most twice, then reports it like a network error.
    case retryable(String)
    /// The answer could not be understood.
    case malformedResponse(String)
    /// The service no longer knows the authentication (an enhanced error with `action:
    /// authentication`: the profile is missing, expired or invalidated).
    case authenticationRequired(String)
    /// A denial with its code and the partner's words (`…_denied_by_…`, or `action: authorization`).
    case denied(code: String, message: String)
    /// The answer came, but the token store could not hold what it changed (it refused the save, or
    /// was away past ``EngineSettings/storageRetryWindow``): the answer counts as not received, so no
    /// instance sharing the store tells the device something the others do not know.
    case storageUnavailable(String)

    /// A sentence for `tokenRequestFailed` descriptions and `status` messages.
    public var summary: String {
        switch self {
        case .network(let why): "network error: \(why)"
        case .timeout: "the backend timed out"
        case .httpStatus(let status, let why): why.isEmpty ? "HTTP \(status)" : "HTTP \(status): \(why)"
        case .throttled(let seconds): "throttled; retry after \(seconds) s"
        case .retryable(let why): "the service asked to retry: \(why)"
        case .malformedResponse(let why): "malformed backend response: \(why)"
        case .authenticationRequired(let why): "authentication required: \(why)"
        case .denied(let code, let message): "\(code): \(message)"
        case .storageUnavailable(let why): "the token store could not save the answer: \(why)"
        }
    }
}
