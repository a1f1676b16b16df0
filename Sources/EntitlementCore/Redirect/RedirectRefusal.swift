/// Why `handleExternalURL` refused a URL. A refused URL never changes any flow.
///
/// Each reason maps to one `status` code, so an app (or a scenario) can tell them apart.
public enum RedirectRefusal: Error, Sendable, Equatable, Hashable {
    /// The URL could not be parsed (bad escape, fragment, whitespace, no scheme, too long).
    case malformedURL(String)
    /// Scheme, host, port or path differ from the configured redirect URL.
    case urlMismatch(expected: String, received: String)
    /// A query parameter appears more than once.
    case duplicateParameter(String)
    /// No login or logout flow is waiting for a redirect (finished, cancelled, already used, never started).
    case noPendingFlow
    /// The URL carries no `state`.
    case missingState
    /// The `state` differs from the one bound to the pending flow.
    case stateMismatch
    /// The callback names another MVPD than the one chosen for this flow (mix-up defence).
    case providerMismatch(expected: String, received: String?)
    /// The pending flow passed its deadline before the URL arrived.
    case expired

    /// The `status` code reported for this refusal.
    public var code: String {
        switch self {
        case .malformedURL: "REDIRECT_MALFORMED"
        case .urlMismatch: "REDIRECT_URL_MISMATCH"
        case .duplicateParameter: "REDIRECT_DUPLICATE_PARAMETER"
        case .noPendingFlow: "REDIRECT_NO_PENDING_FLOW"
        case .missingState: "REDIRECT_STATE_MISSING"
        case .stateMismatch: "REDIRECT_STATE_MISMATCH"
        case .providerMismatch: "REDIRECT_PROVIDER_MISMATCH"
        case .expired: "REDIRECT_EXPIRED"
        }
    }

    /// A sentence for logs and the `status` message; it never contains a secret.
    public var message: String {
        switch self {
        case .malformedURL(let why): "The external URL is malformed: \(why)."
        case .urlMismatch(let expected, let received):
            "The external URL \(Redactor.redact(received)) does not match the redirect URL \(expected)."
        case .duplicateParameter(let name): "The external URL repeats the parameter '\(name)'."
        case .noPendingFlow: "No login or logout is waiting for an external URL."
        case .missingState: "The external URL carries no state."
        case .stateMismatch: "The external URL's state does not belong to the pending flow."
        case .providerMismatch(let expected, let received):
            "The external URL comes from MVPD '\(received ?? "none")', but this flow chose '\(expected)'."
        case .expired: "The pending login expired before the external URL arrived."
        }
    }
}
