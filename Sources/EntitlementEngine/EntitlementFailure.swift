/// Why an awaited call (``AccessEnabler/authorize(_:data:within:)``, ``AccessEnabler/authenticate(forceAuthn:data:within:)``,
/// ``AccessEnabler/answer(to:within:)``) did not succeed: the code and words of the callback that answered
/// it, or why the wait ended before any callback did.
public struct EntitlementFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error code: `tokenRequestFailed`'s (`USER_NOT_AUTHORIZED_ERROR`, …), the status of
    /// `setAuthenticationStatus(0, code)`, a refusal's status code (`INVALID_ARGUMENT`, `LOGOUT_IN_PROGRESS`, …),
    /// or ``ErrorCode/callWaitCancelled`` / ``ErrorCode/callWaitTimedOut`` when the wait ended first.
    public var code: String
    /// What happened, in words (an MVPD's message for a denial); never a secret.
    public var message: String
    /// The callback the failure was read from; nil when the wait ended before the call was answered
    /// (the answer still reaches the delegate later).
    public var callback: Callback?

    /// The failure a callback reports.
    package init(_ callback: Callback) {
        self.callback = callback
        switch callback {
        case .tokenRequestFailed(_, let code, let description):
            self.code = code
            message = description
        case .setAuthenticationStatus(_, let code):
            self.code = code
            message = code == ErrorCode.providerNotSelected ? "No provider was chosen." : "The user is not authenticated."
        case .status(let report):
            code = report.code
            message = report.message
        default:
            code = ErrorCode.genericAuthorization
            message = "An unexpected answer: \(callback.name)."
        }
    }

    /// The wait for an answer ended first (`code` is ``ErrorCode/callWaitCancelled`` or
    /// ``ErrorCode/callWaitTimedOut``): no callback answered the call yet.
    package init(waitEnded code: String) {
        self.code = code
        callback = nil
        message =
            code == ErrorCode.callWaitCancelled
            ? "The wait was cancelled before the call was answered; its answer goes to the delegate."
            : "The time limit passed before the call was answered; its answer goes to the delegate."
    }

    /// `CODE: message`.
    public var description: String { "\(code): \(message)" }
}
