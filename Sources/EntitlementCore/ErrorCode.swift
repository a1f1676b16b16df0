/// The error-code strings the engine passes to `setAuthenticationStatus` and `tokenRequestFailed`.
///
/// Adobe does not publish the iOS string values; these are the constant names themselves.
public enum ErrorCode {
    /// `setAuthenticationStatus(1, "")`: the user is authenticated.
    public static let userAuthenticated = ""
    /// The user is not authenticated (also the code logout completes with).
    public static let userNotAuthenticated = "USER_NOT_AUTHENTICATED_ERROR"
    /// The user cancelled provider selection or the login (`setSelectedProvider(nil)`).
    public static let providerNotSelected = "PROVIDER_NOT_SELECTED_ERROR"
    /// A login flow failed (provider `error=`, no session or profile, expiry, reconfiguration).
    public static let genericAuthentication = "GENERIC_AUTHENTICATION_ERROR"
    /// The MVPD does not authorize the resource (`tokenRequestFailed`).
    public static let userNotAuthorized = "USER_NOT_AUTHORIZED_ERROR"
    /// Authorization failed for another reason: network, timeout, throttling, malformed answer.
    public static let genericAuthorization = "GENERIC_AUTHORIZATION_ERROR"
    /// `status` code: token storage refused a save (full disk, read-only folder, unreachable store);
    /// the engine keeps its state in memory and saves again after the next call.
    public static let storageWriteFailed = "STORAGE_WRITE_FAILED"
    /// `status` code: the token store could not be read within ``EngineSettings/storageRetryWindow`` (it is
    /// restarting, failing over, unreachable), so the call was refused and nothing changed: a passing
    /// failure, the call may be made again. No instance decides a call on a view the store may have moved past.
    public static let storageUnavailable = "STORAGE_UNAVAILABLE"

    /// `status` code (warning): a provider of the chain could not verify what the user may access at
    /// `setRequestor`; its last answer stands.
    public static let providerVerificationFailed = "PROVIDER_VERIFICATION_FAILED"
    /// `tokenRequestFailed`: an entitlement provider could not reach its service (``ProviderFailure/networkFailure``).
    public static let providerNetworkFailure = "PROVIDER_NETWORK_FAILURE"
    /// `tokenRequestFailed`: the provider has no such resource for sale yet (``ProviderFailure/unavailable``).
    public static let providerUnavailable = "PROVIDER_PRODUCT_UNAVAILABLE"
    /// `tokenRequestFailed`: the user's subscription with the provider expired (``ProviderFailure/subscriptionExpired``).
    public static let providerSubscriptionExpired = "PROVIDER_SUBSCRIPTION_EXPIRED"
    /// `tokenRequestFailed`: the provider failed otherwise (``ProviderFailure/unknown(_:)``).
    public static let providerUnknownError = "PROVIDER_UNKNOWN_ERROR"
    /// `tokenRequestFailed` and `providerSignInStatus`: the provider no longer knows the user's sign-in
    /// (``ProviderFailure/invalidToken``, not renewed): sign in again.
    public static let providerSignedOut = "PROVIDER_SIGNED_OUT"
    /// `tokenRequestFailed`: the service wants a step-up the engine does not pass on (not configured, or already done once).
    public static let stepUpRequired = "STEP_UP_REQUIRED"
    /// `tokenRequestFailed`: the app reported the step-up failed or was cancelled.
    public static let stepUpFailed = "STEP_UP_FAILED"
    /// `tokenRequestFailed`: no `completeStepUp` came within ``StepUpSettings/timeout``.
    public static let stepUpTimedOut = "STEP_UP_TIMEOUT"
    /// `status`: the engine was closed before the call was answered (`AccessEnabler.closeSession()`, a
    /// host shutting down); make the call again — on any node, since what is stored carries over.
    public static let sessionClosed = "SESSION_CLOSED"
    /// `EntitlementFailure`, never a callback: the task awaiting a call's answer was cancelled before it
    /// came (`AccessEnabler.answer(to:within:)`); the call stays accepted and is answered through the delegate.
    public static let callWaitCancelled = "CALL_WAIT_CANCELLED"
    /// `EntitlementFailure`, never a callback: the time limit of a wait for a call's answer passed
    /// first (`AccessEnabler.answer(to:within:)`); the call stays accepted and is answered through the delegate.
    public static let callWaitTimedOut = "CALL_WAIT_TIMED_OUT"
    /// `tokenRequestFailed`: the user cancelled (``ProviderFailure/cancelledByUser``); no message.
    public static let providerCancelled = "PROVIDER_REQUEST_CANCELLED"
}
