/// Why a call was refused. A refused call changes nothing and is answered by one `status`
/// callback (level `error`) carrying ``code`` and ``message``.
///
/// A struct with an opaque ``code`` rather than an enum: a reason added later breaks no caller's
/// `switch`; compare ``code`` (the `status` code the app receives) or the whole value instead.
package struct CallRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The `status` code.
    package let code: String
    /// A sentence for people; never contains a secret.
    package let message: String

    private init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// `setSelectedProvider` named an MVPD the requestor does not have.
    package static func unknownProvider(_ id: String) -> CallRefusal {
        CallRefusal(code: "UNKNOWN_PROVIDER", message: "The requestor has no MVPD with id '\(id)'.")
    }

    /// An argument is empty or otherwise unusable.
    package static func invalidArgument(_ why: String) -> CallRefusal {
        CallRefusal(code: "INVALID_ARGUMENT", message: "Invalid argument: \(why).")
    }

    /// More calls are waiting for `setRequestor` than the queue holds.
    package static func queueFull(limit: Int) -> CallRefusal {
        CallRefusal(code: "QUEUE_FULL", message: "\(limit) calls are already waiting for setRequestor to complete.")
    }

    /// A login-type call arrived while a logout is waiting for its redirect.
    package static let logoutInProgress = CallRefusal(
        code: "LOGOUT_IN_PROGRESS", message: "A logout is waiting for its redirect; call again after it completes.")

    /// `setSelectedProvider(id)` while the user is authenticated.
    package static let alreadyAuthenticated = CallRefusal(
        code: "ALREADY_AUTHENTICATED", message: "The user is already authenticated; call logout() or setSelectedProvider(nil) first.")

    /// `setSelectedProvider(id)` while the login's profile is being read.
    package static let profileReadInProgress = CallRefusal(
        code: "PROFILE_READ_IN_PROGRESS", message: "The login's profile is being read; wait for setAuthenticationStatus.")

    /// `handleExternalURL` when no requestor could be configured.
    package static let requestorNotConfigured = CallRefusal(code: "REQUESTOR_NOT_CONFIGURED", message: "No requestor is configured.")

    /// `checkPreauthorizedResources` asked about more resources than one call may (P100).
    package static func tooManyResources(limit: Int) -> CallRefusal {
        CallRefusal(code: "P100", message: "Pre-authorization failed: too many resources (at most \(limit) per call).")
    }

    /// `handleExternalURL` refused the URL: the refusal's code and message.
    package static func redirect(_ refusal: RedirectRefusal) -> CallRefusal {
        CallRefusal(code: refusal.code, message: refusal.message)
    }

    /// The call's step could not be saved to the token store (the reason, with no secret in it).
    package static func notSaved(_ why: String) -> CallRefusal {
        CallRefusal(
            code: ErrorCode.storageWriteFailed,
            message: "The token store could not save what the call changed (\(why)); nothing changed: call again.")
    }

    /// The token store could not be read to decide the call (the reason, with no secret in it): a passing
    /// failure, the call may be made again.
    package static func notRead(_ why: String) -> CallRefusal {
        CallRefusal(
            code: ErrorCode.storageUnavailable,
            message: "The token store could not be read (\(why)); nothing changed: call again.")
    }

    /// `signIn` or `signOut` named no provider of the chain that takes a sign-in.
    package static func noSignIn(provider: String) -> CallRefusal {
        CallRefusal(code: "NO_PROVIDER_SIGN_IN", message: "No provider of the chain called '\(provider)' takes a sign-in.")
    }

    /// `signIn` while the provider's sign-in, verification or renewal runs.
    package static func accountBusy(provider: String) -> CallRefusal {
        CallRefusal(
            code: "PROVIDER_BUSY",
            message: "'\(provider)' is still answering (a sign-in, a verification or a renewal); try again when it has answered.")
    }

    /// `completeStepUp` for a resource no authorization waits to step up.
    package static func noStepUpPending(resource: String) -> CallRefusal {
        CallRefusal(code: "NO_STEP_UP_PENDING", message: "No authorization of '\(resource)' waits for a step-up.")
    }

    /// The `status` report that answers the refused call.
    package var report: StatusReport { StatusReport(code: code, level: .error, message: message) }

    /// The code and the message.
    package var description: String { "\(code): \(message)" }
}
