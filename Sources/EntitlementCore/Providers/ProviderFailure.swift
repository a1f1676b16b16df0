/// Why a provider could not verify or give credentials, with Pugpig's reasons; each reaches the app as
/// a `tokenRequestFailed` code (``code``) and message (``message``).
public enum ProviderFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// The provider could not reach its service.
    case networkFailure
    /// The resource is not available (not yet for sale, unknown to the provider).
    case unavailable
    /// The user's subscription has expired.
    case subscriptionExpired
    /// Anything else, with the underlying error's description (shown after the message).
    case unknown(String)
    /// The user cancelled (a purchase sheet, a sign-in): no message is shown.
    case cancelledByUser
    /// The provider's service refused the resource (or the sign-in), with its message (``ErrorCode/userNotAuthorized``).
    case denied(String)
    /// The service says the user token is no longer valid: the engine renews it where the provider
    /// can, else signs the user out of that provider (``ErrorCode/providerSignedOut``).
    case invalidToken
    /// The service wants a step-up first (policy advice) and the engine does not pass it on: the
    /// resource is not configured for step-up (``EngineSettings/stepUp``), or it already stepped up once.
    case stepUpRequired(StepUpAdvice)

    /// The `tokenRequestFailed` error code.
    public var code: String {
        switch self {
        case .networkFailure: ErrorCode.providerNetworkFailure
        case .unavailable: ErrorCode.providerUnavailable
        case .subscriptionExpired: ErrorCode.providerSubscriptionExpired
        case .unknown: ErrorCode.providerUnknownError
        case .cancelledByUser: ErrorCode.providerCancelled
        case .denied: ErrorCode.userNotAuthorized
        case .invalidToken: ErrorCode.providerSignedOut
        case .stepUpRequired: ErrorCode.stepUpRequired
        }
    }

    /// The message for the user, as Pugpig words it; empty for a cancellation.
    public var message: String {
        switch self {
        case .networkFailure: "We were unable to connect to the network."
        case .unavailable: "This item is not yet available for purchase."
        case .subscriptionExpired: "Your subscription has expired."
        case .unknown(let underlying):
            underlying.isEmpty
                ? "There was a problem with the authorisation service."
                : "There was a problem with the authorisation service: \(underlying)"
        case .cancelledByUser: ""
        case .denied(let message): message
        case .invalidToken: "You have been signed out. Please sign in again."
        case .stepUpRequired(let advice):
            advice.kind == .transaction ? "This needs an approval first." : "This needs a stronger sign-in first (\(advice.value))."
        }
    }

    /// `code: message`.
    public var description: String { message.isEmpty ? code : "\(code): \(message)" }
}
