/// Why `handleExternalURL` refused a URL. A refused URL never changes any flow.
///
/// Each reason maps to one `status` code, so an app (or a scenario) can tell them apart. A struct
/// with an opaque ``code`` rather than an enum: a reason added later breaks no caller's `switch`;
/// compare ``code`` (or the whole value) instead.
package struct RedirectRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `status` code reported for this refusal.
    package let code: String
    /// A sentence for logs and the `status` message; it never contains a secret.
    package let message: String

    private init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// The URL could not be parsed (bad escape, fragment, whitespace, no scheme, too long).
    package static func malformedURL(_ why: String) -> RedirectRefusal {
        RedirectRefusal(code: "REDIRECT_MALFORMED", message: "The external URL is malformed: \(why).")
    }

    /// Scheme, host, port or path differ from the configured redirect URL.
    package static func urlMismatch(expected: String, received: String) -> RedirectRefusal {
        RedirectRefusal(
            code: "REDIRECT_URL_MISMATCH",
            message: "The external URL \(Redactor.redact(received)) does not match the redirect URL \(expected).")
    }

    /// A query parameter appears more than once.
    package static func duplicateParameter(_ name: String) -> RedirectRefusal {
        RedirectRefusal(code: "REDIRECT_DUPLICATE_PARAMETER", message: "The external URL repeats the parameter '\(name)'.")
    }

    /// No login or logout flow is waiting for a redirect (finished, cancelled, already used, never started).
    package static let noPendingFlow = RedirectRefusal(
        code: "REDIRECT_NO_PENDING_FLOW", message: "No login or logout is waiting for an external URL.")

    /// The URL carries no `state`.
    package static let missingState = RedirectRefusal(code: "REDIRECT_STATE_MISSING", message: "The external URL carries no state.")

    /// The `state` differs from the one bound to the pending flow.
    package static let stateMismatch = RedirectRefusal(
        code: "REDIRECT_STATE_MISMATCH", message: "The external URL's state does not belong to the pending flow.")

    /// The callback names another MVPD than the one chosen for this flow (mix-up defence).
    package static func providerMismatch(expected: String, received: String?) -> RedirectRefusal {
        RedirectRefusal(
            code: "REDIRECT_PROVIDER_MISMATCH",
            message: "The external URL comes from MVPD '\(received ?? "none")', but this flow chose '\(expected)'.")
    }

    /// The pending flow passed its deadline before the URL arrived.
    package static let expired = RedirectRefusal(
        code: "REDIRECT_EXPIRED", message: "The pending login expired before the external URL arrived.")

    /// The code and the message.
    package var description: String { "\(code): \(message)" }
}
