/// The conditions that select between rows of the same state and input.
package enum TransitionGuard: String, Sendable, CaseIterable {
    /// The queue of held calls has room.
    case queueHasRoom
    /// The queue of held calls is full.
    case queueFull
    /// The answer is for the latest `setRequestor`.
    case current
    /// Storage holds an unexpired authentication for this requestor and one of its MVPDs.
    case validStoredToken
    /// Storage holds no usable authentication.
    case noValidStoredToken
    /// `getAuthentication(forceAuthn: true)`.
    case forced
    /// `getAuthentication()` without force.
    case notForced
    /// A provider was chosen before and not cancelled: skip the picker.
    case rememberedProvider
    /// No provider is remembered: show the picker.
    case noRememberedProvider
    /// The redirect passed every check.
    case accepted
    /// The redirect has a wrong or missing state or a wrong MVPD.
    case refused
    /// The redirect arrived after the flow's deadline (before its timer fired).
    case deadlinePassed
    /// The redirect carries `error=` with the right state.
    case providerError
    /// No login or logout waits for a redirect.
    case noPendingFlow
    /// The profile read is for this flow's MVPD, valid, with a user id.
    case profileMatchesFlow
    /// No profile yet (the login has not finished on the service): read again after a pause.
    case profileNotYet
    /// Still no profile after the last read of the bounded wait.
    case profileWaitOver
    /// The session answered `authenticate` with a login URL and code.
    case loginNeeded
    /// The session answered `authorize`: no login is needed (a profile exists, TempPass, degraded).
    case noLoginNeeded
    /// Granted under a degradation rule (a `degraded` profile, a decision from `degradation`).
    case degraded
    /// A second-screen code this device showed waits in storage, not expired: its profile is read before
    /// the code is shown here (the user may have entered it already).
    case pendingRegistration
    /// The device asked for the registration code again: its profile is read (unless a read is in flight)
    /// before the code is shown again.
    case codeAskedAgain
    /// The logout answered with an interactive MVPD logout and the device has a web view.
    case interactive
    /// The logout is complete without the MVPD (`complete`, `invalid`, `partner_logout`, no web view).
    case noInteraction
    /// The backend answered with something of the wrong kind.
    case malformedAnswer
    /// The user is authenticated.
    case authenticated
    /// The user is not authenticated.
    case notAuthenticated
    /// A provider of the chain (not the TV provider) claims the resource, or is the chain's fallback.
    case providerClaims
    /// The provider takes one request at a time and one is running.
    case providerBusy
    /// The provider gave credentials.
    case credentialsGiven
    /// The provider could not give credentials (a typed reason).
    case providerFailed
    /// The provider answered, but the token store refused to save the answer (``ProviderFailure/notSaved(_:)``).
    case notSaved
    /// A provider's verification failed: its last view stands.
    case verificationFailed
    /// A provider's view or the TV-provider sign-in changed.
    case changed
    /// A sign-in, verification or renewal already runs for the provider.
    case accountBusy
    /// Storage holds a user token for the provider this instance holds none for: another instance
    /// sharing the store signed in.
    case storedAccountSignedIn
    /// Storage holds no user token for the provider this instance is signed in to: another instance
    /// sharing the store signed out (or was signed out).
    case storedAccountSignedOut
    /// The provider accepted the credentials: a user token.
    case signedIn
    /// The provider said what the user may access.
    case verified
    /// The provider renewed the user token.
    case renewed
    /// The service called the user token invalid.
    case invalidToken
    /// The provider's verification interval is over.
    case verificationDue
    /// A provider account here holds a token whose grants this instance is still finding out.
    case accountUnverified
    /// What every account's token grants is known here again (or no longer asked).
    case accountVerified
    /// The chain's providers are asked what the user may access before `setRequestor` is answered.
    case verifyingProviders
    /// Every provider asked at `setRequestor` answered (or was stopped at its deadline or by a sign-out).
    case providersVerified
    /// The user signed out of the provider (or was signed out: the token could not be renewed).
    case signedOut
    /// Another instance renews the provider's user token (its mark in the store stands): this one waits.
    case renewingElsewhere
    /// The configuration's silent sign-in runs: nothing is saved until it ends, so a renewal (whose mark
    /// the store must hold before the request goes) waits for it.
    case silentSignInRunning
    /// The configuration's silent sign-in ended: a renewal that waited for it starts (its timer, due now).
    case silentSignInEnded
    /// Another instance renewed the provider's user token: the store holds a newer one than the request carried.
    case renewedElsewhere
    /// The provider keeps these credentials for good: answered without asking.
    case keptCredentials
    /// The answer carries policy advice the engine passes to the app.
    case stepUpRequired
    /// The app reports the step-up done.
    case stepUpSucceeded
    /// The app reports the step-up failed or cancelled.
    case stepUpFailed
    /// No authorization waits for a step-up of the resource.
    case noStepUpPending
    /// The store holds a step-up of the resource another instance holds: its outcome is waited for,
    /// or (`completeStepUp`) this instance completes it.
    case stepUpPendingElsewhere
    /// Another instance took the app's `completeStepUp` and asks again: its outcome is waited for.
    case stepUpCompletingElsewhere
    /// The store holds the step-up's outcome, a media token: the calls are given it.
    case stepUpGrantedElsewhere
    /// The store holds the step-up's outcome, a failure (or no longer holds the step-up): the calls fail with it.
    case stepUpEndedElsewhere
    /// A request for the same resource and data is already running.
    case identicalRequest
    /// A logout waits for its redirect.
    case logoutInProgress
    /// The login the request waited for succeeded.
    case loginSucceeded
    /// The server no longer knows the authentication.
    case authenticationRequired
    /// The MVPD or programmer denied the request.
    case denied
    /// Network, timeout or HTTP error.
    case failed
    /// The service throttled the request (HTTP 429).
    case throttled
    /// The MVPD id is not the requestor's.
    case unknownProvider
    /// The URL is malformed or not the redirect URL.
    case badURL
    /// An argument is empty.
    case emptyArgument
    /// Answered from local state, without the backend.
    case localAnswer
    /// The login's profile is being read.
    case profileReadInProgress
    /// `setSelectedProvider(nil)`.
    case cancelled
    /// Every resource asked about has a fresh cached decision and `cache` is true.
    case cachedDecisions
    /// More resources than one pre-authorization may ask about.
    case tooManyResources
    /// The backend could not decide some of the items.
    case partialFailure
    /// The stored tokens belong to another device id.
    case deviceMismatch
    /// Storage holds an unexpired login waiting for its redirect.
    case pendingLogin
    /// Another instance accepted this login's redirect and reads its profile (storage says the login is
    /// completing): it completes the login.
    case pendingLoginTaken
    /// Storage holds neither this login nor an authentication: the login ended on another instance
    /// without signing in.
    case loginEndedElsewhere
    /// The store holds a logout mark this instance had not seen (`StoredTokens.loggedOut`), or another
    /// login than the one this instance holds: the device logged out on another instance (and may have
    /// signed in again), and what it still asks for ends as a logout here would end it.
    case loggedOutElsewhere
    /// Another instance accepted the login's redirect (its page is used up) and has not saved the
    /// outcome yet: the login's outcome is waited for.
    case completingElsewhere
    /// A login call came while the logout waited for its redirect: the logout ends as done first.
    case loginRequested
    /// Storage holds an unexpired logout waiting for the MVPD's logout redirect.
    case pendingLogout
    /// The logout's pending redirect left storage: another instance completed (or ended) the logout.
    case pendingLogoutTaken
    /// The login waiting for its redirect was taken from storage (another instance, or this one before
    /// a restart, started it) and its page is known: the device may never have received it.
    case startedElsewhere
    /// The device asked again for the login this instance sent it to: the session's code may have died
    /// at the service meanwhile (a session request that arrived late replaced it), or the user signed in
    /// and only the redirect was lost — the login's profile is read before its page goes out again.
    case pageAskedAgain
    /// The service says the login's code is unknown or expired (a newer session for the device
    /// replaced it, or it ran out): before the redirect its page is dead, so the login starts a new
    /// session; after it, the profile the sign-in saved is read with the MVPD instead.
    case sessionGone
    /// The requestor has MVPDs with platform SSO and the device has a platform picker.
    case platformProviders
    /// The platform signed in with a provider the requestor supports through it.
    case platformSignedIn
    /// The user chose "Other TV Providers" in the platform picker (N003).
    case otherProviders
    /// The user chose a provider the requestor does not support through the platform (N004).
    case unsupportedProvider
    /// The session came from platform SSO (logout reports VSA203).
    case platformSession
    /// Nothing valid is stored, and the platform may be signed in to one of the requestor's MVPDs.
    case platformMayBeSignedIn
    /// The partner session gave the request the platform's framework answers.
    case partnerRequest
    /// The partner session fell back (or did not answer with a request): sign in the classic way.
    case partnerFallback
    /// The session lacks parameters the engine can give (`resume`): it is resumed with them.
    case missingParameters
    /// A poll of the code was refused: the session's status tells an expired code from a pending one.
    case codeRefused
    /// The session's status says the code is still valid.
    case codePending
    /// The platform is not signed in to any of the requestor's MVPDs.
    case platformNotSignedIn
    /// The MVPD (or the session) is TempPass.
    case tempPass
    /// Another requestor's authentication on this device, with an MVPD that allows single sign-on.
    case singleSignOn
    /// Another requestor's authentication on this device, with an MVPD that authenticates per requestor.
    case passiveAuthentication
    /// The device logs in on a second screen (cookbook E).
    case secondScreen
    /// The session's code was issued for a second screen.
    case codeIssued
    /// No profile for the code yet.
    case notYetUsed
    /// The poll is due.
    case pollDue
    /// The registration code expired.
    case codeExpired
    /// The service asked to retry a request still waited for, and attempts are left.
    case retryAsked
    /// A retry's pause is over.
    case retryDue
    /// A retry's pause is not over yet.
    case retryNotDue
}
