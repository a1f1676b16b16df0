/// Why a call was refused. A refused call changes nothing and is answered by one `status`
/// callback (level `error`) carrying ``code`` and ``message``.
public enum CallRefusal: Error, Sendable, Hashable {
    /// `setSelectedProvider` named an MVPD the requestor does not have.
    case unknownProvider(String)
    /// An argument is empty or otherwise unusable.
    case invalidArgument(String)
    /// More calls are waiting for `setRequestor` than the queue holds.
    case queueFull(limit: Int)
    /// A login-type call arrived while a logout is waiting for its redirect.
    case logoutInProgress
    /// `setSelectedProvider(id)` while the user is authenticated.
    case alreadyAuthenticated
    /// `setSelectedProvider(id)` while the login's profile is being read.
    case profileReadInProgress
    /// `handleExternalURL` when no requestor could be configured.
    case requestorNotConfigured
    /// `checkPreauthorizedResources` asked about more resources than one call may (P100).
    case tooManyResources(limit: Int)
    /// `handleExternalURL` refused the URL.
    case redirect(RedirectRefusal)
    /// The call's step could not be saved to the token store (the reason, with no secret in it).
    case notSaved(String)
    /// `signIn` or `signOut` named no provider of the chain that takes a sign-in.
    case noSignIn(provider: String)
    /// `signIn` while the provider's sign-in, verification or renewal runs.
    case accountBusy(provider: String)
    /// `completeStepUp` for a resource no authorization waits to step up.
    case noStepUpPending(resource: String)

    /// The `status` code.
    public var code: String {
        switch self {
        case .unknownProvider: "UNKNOWN_PROVIDER"
        case .invalidArgument: "INVALID_ARGUMENT"
        case .queueFull: "QUEUE_FULL"
        case .logoutInProgress: "LOGOUT_IN_PROGRESS"
        case .alreadyAuthenticated: "ALREADY_AUTHENTICATED"
        case .profileReadInProgress: "PROFILE_READ_IN_PROGRESS"
        case .requestorNotConfigured: "REQUESTOR_NOT_CONFIGURED"
        case .tooManyResources: "P100"
        case .redirect(let refusal): refusal.code
        case .notSaved: ErrorCode.storageWriteFailed
        case .noSignIn: "NO_PROVIDER_SIGN_IN"
        case .accountBusy: "PROVIDER_BUSY"
        case .noStepUpPending: "NO_STEP_UP_PENDING"
        }
    }

    /// A sentence for people; never contains a secret.
    public var message: String {
        switch self {
        case .unknownProvider(let id): "The requestor has no MVPD with id '\(id)'."
        case .invalidArgument(let why): "Invalid argument: \(why)."
        case .queueFull(let limit): "\(limit) calls are already waiting for setRequestor to complete."
        case .logoutInProgress: "A logout is waiting for its redirect; call again after it completes."
        case .alreadyAuthenticated:
            "The user is already authenticated; call logout() or setSelectedProvider(nil) first."
        case .profileReadInProgress: "The login's profile is being read; wait for setAuthenticationStatus."
        case .requestorNotConfigured: "No requestor is configured."
        case .tooManyResources(let limit): "Pre-authorization failed: too many resources (at most \(limit) per call)."
        case .redirect(let refusal): refusal.message
        case .notSaved(let why): "The token store could not save what the call changed (\(why)); nothing changed: call again."
        case .noSignIn(let provider): "No provider of the chain called '\(provider)' takes a sign-in."
        case .accountBusy(let provider): "'\(provider)' is still answering (a sign-in, a verification or a renewal); try again when it has answered."
        case .noStepUpPending(let resource): "No authorization of '\(resource)' waits for a step-up."
        }
    }

    /// The `status` report that answers the refused call.
    public var report: StatusReport { StatusReport(code: code, level: .error, message: message) }
}
