import EntitlementEngine

/// A fault the simulated backend injects into one operation.
public enum SimulatedFault: Sendable, Hashable {
    /// Fail with this error (network, timeout, HTTP status, throttling, …).
    case fail(BackendError)
    /// Refuse with this REST API V2 enhanced error (its HTTP status and `action` decide how the
    /// engine reads it, as from the real service).
    case refuse(V2EnhancedError)
    /// Answer a decision request with this error on every item (HTTP 200, as V2 sends denials
    /// and item-level failures); other operations fail with it at the top level.
    case refuseItems(V2EnhancedError)
    /// Answer with a response of the wrong kind (garbage from the backend).
    case answerGarbage
    /// Answer an empty profiles map: the service has not saved the login's profile yet.
    case answerNoProfileYet
    /// Answer a session request as if these parameters (`mvpd`, `domainName`, `redirectUrl`) had not
    /// been sent: `POST sessions` answers `resume` (the session waits for them), `POST sessions/{code}`
    /// answers `retry`, `POST sessions/sso/{partner}` falls back to the classic login; other operations
    /// fail with `invalid_request`.
    case answerMissingParameters([String])
}
