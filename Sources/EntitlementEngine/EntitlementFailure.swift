/// Why an awaited call (``AccessEnabler/authorize(_:data:)``, ``AccessEnabler/authenticate(forceAuthn:data:)``)
/// did not succeed: the code and words of the callback that answered it.
public struct EntitlementFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The error code: `tokenRequestFailed`'s (`USER_NOT_AUTHORIZED_ERROR`, …), the status of
    /// `setAuthenticationStatus(0, code)`, or a refusal's status code (`INVALID_ARGUMENT`, `LOGOUT_IN_PROGRESS`, …).
    public var code: String
    /// What happened, in words (an MVPD's message for a denial); never a secret.
    public var message: String
    /// The callback the failure was read from.
    public var callback: Callback

    /// The failure a callback reports.
    public init(_ callback: Callback) {
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

    /// `CODE: message`.
    public var description: String { "\(code): \(message)" }
}
