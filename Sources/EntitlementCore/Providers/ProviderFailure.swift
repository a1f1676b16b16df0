/// Why a provider could not verify or give credentials, with Pugpig's reasons; each reaches the app as
/// a `tokenRequestFailed` code (``code``) and message (``message``).
///
/// A struct, not an enum, so the engine can learn new reasons without breaking a provider's or an app's
/// `switch`: look at ``kind`` (`failure.kind == .denied`); make one with the static members
/// (`.failure(.invalidToken)`, `.failure(.denied("Not in your plan."))`).
public struct ProviderFailure: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is; more kinds may come.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        private enum Name: String, Sendable, Hashable {
            case networkFailure, unavailable, subscriptionExpired, unknown, cancelledByUser, denied, invalidToken, stepUpRequired, notSaved, notRead
        }
        private let name: Name
        private init(_ name: Name) { self.name = name }

        /// The provider could not reach its service.
        public static let networkFailure = Kind(.networkFailure)
        /// The resource is not available.
        public static let unavailable = Kind(.unavailable)
        /// The user's subscription has expired.
        public static let subscriptionExpired = Kind(.subscriptionExpired)
        /// Anything else.
        public static let unknown = Kind(.unknown)
        /// The user cancelled.
        public static let cancelledByUser = Kind(.cancelledByUser)
        /// The provider's service refused.
        public static let denied = Kind(.denied)
        /// The user token is no longer valid.
        public static let invalidToken = Kind(.invalidToken)
        /// The service wants a step-up first.
        public static let stepUpRequired = Kind(.stepUpRequired)
        /// The provider answered, but the token store refused to save what the answer changed.
        public static let notSaved = Kind(.notSaved)
        /// The provider granted, but the token store could not be read to decide on what it holds.
        public static let notRead = Kind(.notRead)

        /// The kind's name (`invalidToken`).
        public var description: String { name.rawValue }
    }

    /// What kind of failure it is.
    public let kind: Kind
    /// The underlying error's description (``Kind/unknown``) or the service's message (``Kind/denied``).
    public let detail: String?
    /// What the service asks for (``Kind/stepUpRequired``).
    public let advice: StepUpAdvice?

    private init(_ kind: Kind, detail: String? = nil, advice: StepUpAdvice? = nil) {
        self.kind = kind
        self.detail = detail
        self.advice = advice
    }

    /// The provider could not reach its service.
    public static let networkFailure = ProviderFailure(.networkFailure)
    /// The resource is not available (not yet for sale, unknown to the provider).
    public static let unavailable = ProviderFailure(.unavailable)
    /// The user's subscription has expired.
    public static let subscriptionExpired = ProviderFailure(.subscriptionExpired)
    /// Anything else, with the underlying error's description (shown after the message).
    public static func unknown(_ underlying: String) -> ProviderFailure { ProviderFailure(.unknown, detail: underlying) }
    /// The user cancelled (a purchase sheet, a sign-in): no message is shown.
    public static let cancelledByUser = ProviderFailure(.cancelledByUser)
    /// The provider's service refused the resource (or the sign-in), with its message (``ErrorCode/userNotAuthorized``).
    public static func denied(_ message: String) -> ProviderFailure { ProviderFailure(.denied, detail: message) }
    /// The service says the user token is no longer valid: the engine renews it where the provider
    /// can, else signs the user out of that provider (``ErrorCode/providerSignedOut``).
    public static let invalidToken = ProviderFailure(.invalidToken)
    /// The service wants a step-up first (policy advice) and the engine does not pass it on: the
    /// resource is not configured for step-up (``EngineSettings/stepUp``), or it already stepped up once.
    public static func stepUpRequired(_ advice: StepUpAdvice) -> ProviderFailure { ProviderFailure(.stepUpRequired, advice: advice) }
    /// The provider answered (a sign-in, credentials to keep), but the token store refused the save, with
    /// its reason: the answer is not taken, anywhere (``ErrorCode/storageWriteFailed``); asking again
    /// once the store heals works.
    public static func notSaved(_ reason: String) -> ProviderFailure { ProviderFailure(.notSaved, detail: reason) }
    /// The provider granted, but the token store could not be read, with its reason: the grant is not
    /// handed out on a view the store may have moved past (a logout through another instance), as an
    /// authorization the service decided is not (``ErrorCode/storageUnavailable``); asking again once the
    /// store heals works.
    public static func notRead(_ reason: String) -> ProviderFailure { ProviderFailure(.notRead, detail: reason) }

    /// The `tokenRequestFailed` error code.
    public var code: String {
        switch kind {
        case .networkFailure: ErrorCode.providerNetworkFailure
        case .unavailable: ErrorCode.providerUnavailable
        case .subscriptionExpired: ErrorCode.providerSubscriptionExpired
        case .cancelledByUser: ErrorCode.providerCancelled
        case .denied: ErrorCode.userNotAuthorized
        case .invalidToken: ErrorCode.providerSignedOut
        case .stepUpRequired: ErrorCode.stepUpRequired
        case .notSaved: ErrorCode.storageWriteFailed
        case .notRead: ErrorCode.storageUnavailable
        default: ErrorCode.providerUnknownError
        }
    }

    /// The message for the user, as Pugpig words it; empty for a cancellation.
    public var message: String {
        switch kind {
        case .networkFailure: return "We were unable to connect to the network."
        case .unavailable: return "This item is not yet available for purchase."
        case .subscriptionExpired: return "Your subscription has expired."
        case .cancelledByUser: return ""
        case .denied: return detail ?? ""
        case .invalidToken: return "You have been signed out. Please sign in again."
        case .stepUpRequired:
            guard let advice else { return "This needs a stronger sign-in first." }
            return advice.kind == .transaction ? "This needs an approval first." : "This needs a stronger sign-in first (\(advice.value))."
        case .notSaved:
            return "The token store could not save the provider's answer (\(detail ?? "")); nothing changed: try again."
        case .notRead:
            return "The token store could not be read (\(detail ?? "")); nothing was handed out: try again."
        default:
            let underlying = detail ?? ""
            return underlying.isEmpty
                ? "There was a problem with the authorisation service."
                : "There was a problem with the authorisation service: \(underlying)"
        }
    }

    /// `code: message`.
    public var description: String { message.isEmpty ? code : "\(code): \(message)" }
}
