/// Policy advice on an authorization answer (ForgeRock's `PolicyAdvice`): before the resource is
/// granted, the user must step up — approve this one transaction (a PIN for a parental control), or
/// authenticate to a stronger service. The engine asks the app (``Callback/stepUpRequired(resource:advice:)``),
/// and after the app's `completeStepUp(resource:succeeded:)` retries the authorization once, carrying
/// the transaction id (single use).
public struct StepUpAdvice: Sendable, Hashable {
    /// What the step-up is.
    public enum Kind: String, Sendable, Hashable {
        /// `TransactionConditionAdvice`: approve this transaction (``StepUpAdvice/transactionID``).
        case transaction
        /// `AuthenticateToServiceConditionAdvice`: authenticate to the service ``StepUpAdvice/value`` names.
        case authenticateToService
    }

    /// What the step-up is.
    public var kind: Kind
    /// The advice's value: the service to authenticate to, or the transaction's condition.
    public var value: String
    /// The transaction to approve, for a transactional step-up (a secret: used once).
    public var transactionID: String?

    /// Creates advice.
    public init(kind: Kind, value: String, transactionID: String? = nil) {
        self.kind = kind
        self.value = value
        self.transactionID = transactionID
    }
}

/// Which authorizations may step up, and how long the app has (``EngineSettings/stepUp``).
public struct StepUpSettings: Sendable, Hashable {
    /// The resources whose advice the engine passes to the app; advice for any other is a failure.
    public var resources: Set<String>
    /// How long the engine waits for `completeStepUp`, clamped to 10 s…10 minutes (default 2 minutes).
    public var timeout: Duration { didSet { timeout = Self.clamp(timeout) } }

    /// Creates settings.
    public init(resources: Set<String>, timeout: Duration = .seconds(120)) {
        self.resources = resources
        self.timeout = Self.clamp(timeout)
    }

    static func clamp(_ value: Duration) -> Duration { min(max(value, .seconds(10)), .seconds(600)) }
}
