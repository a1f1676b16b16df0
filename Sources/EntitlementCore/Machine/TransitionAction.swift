/// What a row does, named for the callback it emits or the effect it asks for.
package enum TransitionAction: String, Sendable, CaseIterable {
    /// Hold the call until `setRequestor` completes.
    case enqueue
    /// Fetch the configuration, then the stored tokens.
    case loadConfiguration
    /// Emit `setRequestorComplete`.
    case setRequestorComplete
    /// Keep the valid stored tokens, drop the rest.
    case restoreTokens
    /// Resubmit the held calls, in order.
    case runQueue
    /// Answer every held call with its failure.
    case failQueue
    /// Answer the call with its failure (no configuration).
    case failCall
    /// Emit `status` (a refusal or a notice).
    case status
    /// Emit `displayProviderDialog`.
    case displayProviderDialog
    /// Emit `presentTvProviderDialog` and show the platform's picker.
    case presentTvProviderDialog
    /// Emit `dismissTvProviderDialog` and stop waiting for the platform's picker.
    case dismissTvProviderDialog
    /// Ask the platform, without UI, for its assertion.
    case checkPlatformSignIn
    /// Ask the backend for the partner's request (`POST sessions/sso/{partner}`).
    case requestPartnerSession
    /// Create a session (`POST sessions`).
    case createSession
    /// Resume a session with the parameters it lacks (`POST sessions/{code}`).
    case resumeSession
    /// Ask a session's status (`GET sessions/{code}`).
    case checkSession
    /// Read the profile by the second screen's code.
    case pollRegistration
    /// Emit `sendTrackingData(mvpdSelection)`.
    case trackSelection
    /// Draw the flow's state.
    case drawSecrets
    /// Start the flow's deadline.
    case startTimer
    /// Cancel the flow's deadline.
    case cancelTimer
    /// Emit `navigateToUrl` (login or logout URL).
    case navigateToUrl
    /// Emit `setAuthenticationStatus` (with its tracking data).
    case setAuthenticationStatus
    /// Read the login's profile (by code, by MVPD, or the platform's partner profile).
    case readProfile
    /// Add the call to the running flow or request.
    case join
    /// Ask the backend for a decision (with a fresh media token).
    case authorize
    /// Emit `setToken` to every waiting call (with tracking data).
    case setToken
    /// Emit `tokenRequestFailed` to every waiting call (with tracking data).
    case tokenRequestFailed
    /// Emit `selectedProvider`.
    case selectedProvider
    /// Emit `setMetadataStatus`.
    case setMetadataStatus
    /// Ask the backend to pre-authorize.
    case preauthorize
    /// Emit `preauthorizedResources`.
    case preauthorizedResources
    /// Send the logout request (`GET logout/{mvpd}`).
    case requestLogout
    /// Read the device's profiles (single sign-on at `setRequestor`).
    case readProfiles
    /// Send a request again, as it was.
    case resendRequest
    /// Ask a provider of the chain for its credentials.
    case askProvider
    /// Emit `entitlementsChanged`.
    case entitlementsChanged
    /// Emit `providerSignInStatus`.
    case providerSignInStatus
    /// Emit `stepUpRequired`.
    case stepUpRequired
}
