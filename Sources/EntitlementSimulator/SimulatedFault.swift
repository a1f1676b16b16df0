import EntitlementEngine

/// A fault the simulated backend injects into one operation.
public enum SimulatedFault: Sendable, Hashable {
    /// Fail with this error (network, timeout, HTTP status, throttling, …).
    case fail(BackendError)
    /// Answer with a response of the wrong kind (garbage from the backend).
    case answerGarbage
}
