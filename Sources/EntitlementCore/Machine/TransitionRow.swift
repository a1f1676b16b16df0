/// One row of the machine's transition table: in `region`, from state `from`, on `input`, when
/// `condition` holds, to state `to`, doing `actions`. The charts in `StateCharts/` draw exactly
/// these rows (`from --> to : input [condition] / action, action`).
public struct TransitionRow: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The machine's orthogonal regions.
    public enum Region: String, Sendable, Hashable, CaseIterable, Comparable {
        /// Configuration and the queue of held calls.
        case configuration
        /// Login flows and logout.
        case authentication
        /// One small machine per resource being authorized (`idle` when none runs).
        case authorization
        /// Every call's first stop: argument refusals, read-only answers, and one small machine per
        /// pre-authorization or metadata read waiting for the backend (`idle` otherwise).
        case calls
        /// With a provider chain: watches what the user may access, and says when it changed.
        case entitlements
        /// One small machine per provider of the chain that takes a sign-in (``EntitlementMachine/AccountKind``).
        case accounts

        /// Orders regions as listed.
        public static func < (lhs: Region, rhs: Region) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }

        /// The region's states, in chart order.
        public var states: [String] {
            switch self {
            case .configuration: ConfigurationState.Kind.allCases.map(\.rawValue)
            case .authentication: AuthenticationState.Kind.allCases.map(\.rawValue)
            case .authorization: AuthorizationRequest.Kind.allCases.map(\.rawValue)
            case .calls: PendingCallKind.allCases.map(\.rawValue)
            case .entitlements: EntitlementsWatch.allCases.map(\.rawValue)
            case .accounts: EntitlementMachine.AccountKind.allCases.map(\.rawValue)
            }
        }

        /// The state the region starts in.
        public var initialState: String { states[0] }
    }

    /// The region.
    public var region: Region
    /// The state before.
    public var from: String
    /// The input: a call's name, another ``Input`` case, `entitlementCall` (any call but
    /// `setRequestor`, as the configuration region sees it) or `authenticationExpired`.
    public var input: String
    /// The condition that selects this row, if the input has several.
    public var condition: String?
    /// The state after.
    public var to: String
    /// What the machine does, in order.
    public var actions: [String]

    /// Creates a row.
    public init(
        region: Region, from: String, input: String, condition: String? = nil, to: String, actions: [String] = []
    ) {
        self.region = region
        self.from = from
        self.input = input
        self.condition = condition
        self.to = to
        self.actions = actions
    }

    /// Orders rows by region, source state, input, condition and target.
    public static func < (lhs: TransitionRow, rhs: TransitionRow) -> Bool {
        (lhs.region, lhs.from, lhs.input, lhs.condition ?? "", lhs.to, lhs.actions.joined(separator: ","))
            < (rhs.region, rhs.from, rhs.input, rhs.condition ?? "", rhs.to, rhs.actions.joined(separator: ","))
    }

    /// The row as a chart line: `from --> to : input [condition] / action, action`.
    public var chartLine: String {
        var label = input
        if let condition { label += " [\(condition)]" }
        if !actions.isEmpty { label += " / " + actions.joined(separator: ", ") }
        return "\(from) --> \(to) : \(label)"
    }

    /// `region: from --> to : input [condition] / actions`.
    public var description: String { "\(region.rawValue): \(chartLine)" }
}

/// The entitlements region's one state: it watches every input and emits `entitlementsChanged` when
/// what the user may access changed (only with a provider chain).
public enum EntitlementsWatch: String, Sendable, CaseIterable {
    /// Watching.
    case watching
}

/// The conditions that select between rows of the same state and input.
public enum TransitionGuard: String, Sendable, CaseIterable {
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
    /// A second-screen code this device showed waits in storage, not expired.
    case pendingRegistration
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
    /// The user signed out of the provider (or was signed out: the token could not be renewed).
    case signedOut
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

/// What a row does, named for the callback it emits or the effect it asks for.
public enum TransitionAction: String, Sendable, CaseIterable {
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
    /// Save the tokens.
    case persist
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

/// Every input a row can name: the calls, the other inputs, and two the regions name specially.
public enum TransitionInput: String, Sendable, CaseIterable {
    /// `setRequestor`.
    case setRequestor
    /// Any call but `setRequestor`, as the configuration region sees it.
    case entitlementCall
    /// `checkAuthentication`.
    case checkAuthentication
    /// `getAuthentication`.
    case getAuthentication
    /// `setSelectedProvider`.
    case setSelectedProvider
    /// `handleExternalURL`.
    case handleExternalURL
    /// `getSelectedProvider`.
    case getSelectedProvider
    /// `checkAuthorization`.
    case checkAuthorization
    /// `getAuthorization`.
    case getAuthorization
    /// `checkPreauthorizedResources`.
    case checkPreauthorizedResources
    /// `getMetadata`.
    case getMetadata
    /// `logout`.
    case logout
    /// `setOptions` changed the options.
    case optionsChanged
    /// The configuration arrived.
    case configurationLoaded
    /// The configuration failed.
    case configurationFailed
    /// The shell drew a flow's secrets.
    case flowSecretsDrawn
    /// A backend request answered.
    case backendAnswered
    /// A backend request failed.
    case backendFailed
    /// A flow's deadline passed.
    case timerFired
    /// A provider of the chain answered.
    case providerAnswered
    /// `signIn` (to a provider of the chain).
    case signIn
    /// `signOut` (of a provider of the chain).
    case signOut
    /// `completeStepUp`.
    case completeStepUp
    /// Any input: the entitlements region looks at the outcome of every one.
    case anyInput
    /// The stored authentication expired (noticed before a call).
    case authenticationExpired
    /// Shared storage changed under this instance.
    case storageChanged
    /// A save of the tokens failed.
    case storageWriteFailed
    /// A call's step could not be saved, so it was not taken.
    case callNotSaved
    /// The platform's provider picker answered.
    case platformPickerAnswered
    /// The platform said whether it is signed in (at `setRequestor`).
    case platformSignInChecked
}

/// The per-request states of the calls region.
public enum PendingCallKind: String, Sendable, CaseIterable {
    /// No request of this kind is waiting.
    case idle
    /// A pre-authorization waits for the backend.
    case preauthorizing
}

extension ConfigurationState {
    /// The configuration region's state names.
    public enum Kind: String, Sendable, CaseIterable {
        /// See ``ConfigurationState/unconfigured``.
        case unconfigured
        /// See ``ConfigurationState/configuring(requestorID:operation:calls:)``.
        case configuring
        /// See ``ConfigurationState/signingIn(_:operation:calls:)``.
        case signingIn
        /// See ``ConfigurationState/configured(_:)``.
        case configured
        /// See ``ConfigurationState/failed(requestorID:_:retryAt:)``.
        case failed
    }

    /// This state's name.
    public var kind: Kind {
        switch self {
        case .unconfigured: .unconfigured
        case .configuring: .configuring
        case .signingIn: .signingIn
        case .configured: .configured
        case .failed: .failed
        }
    }
}

extension AuthenticationState {
    /// The authentication region's state names.
    public enum Kind: String, Sendable, CaseIterable {
        /// See ``AuthenticationState/unknown``.
        case unknown
        /// See ``AuthenticationState/unauthenticated``.
        case unauthenticated
        /// See ``AuthenticationState/requestingPartnerSession(_:operation:)``.
        case requestingPartnerSession
        /// See ``AuthenticationState/platformPicking(_:)``.
        case platformPicking
        /// See ``AuthenticationState/selectingProvider(_:)``.
        case selectingProvider
        /// See ``AuthenticationState/preparingLogin(_:)``.
        case preparingLogin
        /// See ``AuthenticationState/creatingSession(_:operation:)``.
        case creatingSession
        /// See ``AuthenticationState/awaitingRedirect(_:)``.
        case awaitingRedirect
        /// See ``AuthenticationState/awaitingSecondScreen(_:_:poll:)``.
        case awaitingSecondScreen
        /// See ``AuthenticationState/readingProfile(_:operation:attempt:)``.
        case readingProfile
        /// See ``AuthenticationState/authenticated(_:)``.
        case authenticated
        /// See ``AuthenticationState/preparingLogout(_:)``.
        case preparingLogout
        /// See ``AuthenticationState/requestingLogout(_:operation:)``.
        case requestingLogout
        /// See ``AuthenticationState/loggingOut(_:)``.
        case loggingOut
    }

    /// This state's name.
    public var kind: Kind {
        switch self {
        case .unknown: .unknown
        case .unauthenticated: .unauthenticated
        case .requestingPartnerSession: .requestingPartnerSession
        case .platformPicking: .platformPicking
        case .selectingProvider: .selectingProvider
        case .preparingLogin: .preparingLogin
        case .creatingSession: .creatingSession
        case .awaitingRedirect: .awaitingRedirect
        case .awaitingSecondScreen: .awaitingSecondScreen
        case .readingProfile: .readingProfile
        case .authenticated: .authenticated
        case .preparingLogout: .preparingLogout
        case .requestingLogout: .requestingLogout
        case .loggingOut: .loggingOut
        }
    }
}

extension AuthorizationRequest {
    /// The authorization region's state names (`idle`: no request for the resource).
    public enum Kind: String, Sendable, CaseIterable {
        /// No request for the resource runs.
        case idle
        /// Waits for the login it started or joined.
        case waitingForAuthentication
        /// Waits for the decision (and its media token).
        case authorizing
        /// Waits for a provider of the chain to give its credentials.
        case askingProvider
        /// Waits for the provider's running request to end (one at a time).
        case waitingForProvider
        /// Waits for the app's step-up.
        case awaitingStepUp
    }

    /// This request's state name.
    public var kind: Kind {
        switch phase {
        case .waitingForAuthentication: .waitingForAuthentication
        case .authorizing: .authorizing
        case .askingProvider: .askingProvider
        case .waitingForProvider: .waitingForProvider
        case .awaitingStepUp: .awaitingStepUp
        }
    }
}

extension Input {
    /// The input as rows name it: a call, or the input case.
    public var transitionInput: TransitionInput {
        switch self {
        case .callReceived(_, let call): call.transitionInput
        case .optionsChanged: .optionsChanged
        case .configurationLoaded: .configurationLoaded
        case .configurationFailed: .configurationFailed
        case .flowSecretsDrawn: .flowSecretsDrawn
        case .backendAnswered: .backendAnswered
        case .backendFailed: .backendFailed
        case .providerAnswered: .providerAnswered
        case .timerFired: .timerFired
        case .storageChanged: .storageChanged
        case .storageWriteFailed: .storageWriteFailed
        case .callNotSaved: .callNotSaved
        case .platformPickerAnswered: .platformPickerAnswered
        case .platformSignInChecked: .platformSignInChecked
        }
    }

    /// The input's name in rows: a call's name, or the input case.
    public var name: String { transitionInput.rawValue }
}

extension EntitlementCall {
    /// The call as rows name it.
    public var transitionInput: TransitionInput {
        switch self {
        case .setRequestor: .setRequestor
        case .checkAuthentication: .checkAuthentication
        case .getAuthentication: .getAuthentication
        case .setSelectedProvider: .setSelectedProvider
        case .handleExternalURL: .handleExternalURL
        case .getSelectedProvider: .getSelectedProvider
        case .checkAuthorization: .checkAuthorization
        case .getAuthorization: .getAuthorization
        case .checkPreauthorizedResources: .checkPreauthorizedResources
        case .getMetadata: .getMetadata
        case .logout: .logout
        case .signIn: .signIn
        case .signOut: .signOut
        case .completeStepUp: .completeStepUp
        }
    }
}

extension TransitionInput {
    /// Whether the input is an app's call (``EntitlementCall``), not an answer, a timer or a change.
    public var isCall: Bool {
        switch self {
        case .setRequestor, .checkAuthentication, .getAuthentication, .setSelectedProvider, .handleExternalURL, .getSelectedProvider,
            .checkAuthorization, .getAuthorization, .checkPreauthorizedResources, .getMetadata, .logout, .signIn, .signOut,
            .completeStepUp:
            true
        case .entitlementCall, .optionsChanged, .configurationLoaded, .configurationFailed, .flowSecretsDrawn, .backendAnswered,
            .backendFailed, .timerFired, .providerAnswered, .anyInput, .authenticationExpired, .storageChanged, .storageWriteFailed,
            .callNotSaved, .platformPickerAnswered, .platformSignInChecked:
            false
        }
    }
}
