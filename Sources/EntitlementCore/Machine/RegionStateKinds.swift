/// The entitlements region's one state: it watches every input and emits `entitlementsChanged` when
/// what the user may access changed (only with a provider chain).
package enum EntitlementsWatch: String, Sendable, CaseIterable {
    /// Watching.
    case watching
}

/// The per-request states of the calls region.
package enum PendingCallKind: String, Sendable, CaseIterable {
    /// No request of this kind is waiting.
    case idle
    /// A pre-authorization waits for the backend.
    case preauthorizing
}

extension ConfigurationState {
    /// The configuration region's state names.
    package enum Kind: String, Sendable, CaseIterable {
        /// See `ConfigurationState.unconfigured`.
        case unconfigured
        /// See `ConfigurationState.configuring(requestorID:operation:calls:)`.
        case configuring
        /// See `ConfigurationState.signingIn(_:operation:calls:)`.
        case signingIn
        /// See `ConfigurationState.configured(_:)`.
        case configured
        /// See `ConfigurationState.failed(requestorID:_:retryAt:)`.
        case failed
    }

    /// This state's name.
    package var kind: Kind {
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
    package enum Kind: String, Sendable, CaseIterable {
        /// See `AuthenticationState.unknown`.
        case unknown
        /// See `AuthenticationState.unauthenticated`.
        case unauthenticated
        /// See `LoginStep.requestingPartnerSession(operation:)`.
        case requestingPartnerSession
        /// See `LoginStep.platformPicking`.
        case platformPicking
        /// See `LoginStep.selectingProvider`.
        case selectingProvider
        /// See `LoginStep.preparingLogin`.
        case preparingLogin
        /// See `LoginStep.creatingSession(operation:)`.
        case creatingSession
        /// See `LoginStep.awaitingRedirect`.
        case awaitingRedirect
        /// See `LoginStep.awaitingSecondScreen(_:poll:)`.
        case awaitingSecondScreen
        /// See `LoginStep.readingProfile(operation:attempt:)`.
        case readingProfile
        /// See `AuthenticationState.authenticated(_:)`.
        case authenticated
        /// See `LogoutStep.preparingLogout`.
        case preparingLogout
        /// See `LogoutStep.requestingLogout(operation:)`.
        case requestingLogout
        /// See `LogoutStep.loggingOut`.
        case loggingOut
    }

    /// This state's name: a login's or logout's is its step's.
    package var kind: Kind {
        switch self {
        case .unknown: .unknown
        case .unauthenticated: .unauthenticated
        case .login(_, let step): step.kind
        case .authenticated: .authenticated
        case .logout(_, let step): step.kind
        }
    }
}

extension LoginStep {
    /// This step's state name.
    package var kind: AuthenticationState.Kind {
        switch self {
        case .selectingProvider: .selectingProvider
        case .requestingPartnerSession: .requestingPartnerSession
        case .platformPicking: .platformPicking
        case .preparingLogin: .preparingLogin
        case .creatingSession: .creatingSession
        case .awaitingRedirect: .awaitingRedirect
        case .awaitingSecondScreen: .awaitingSecondScreen
        case .readingProfile: .readingProfile
        }
    }
}

extension LogoutStep {
    /// This step's state name.
    package var kind: AuthenticationState.Kind {
        switch self {
        case .preparingLogout: .preparingLogout
        case .requestingLogout: .requestingLogout
        case .loggingOut: .loggingOut
        }
    }
}

extension AuthorizationRequest {
    /// The authorization region's state names (`idle`: no request for the resource).
    package enum Kind: String, Sendable, CaseIterable {
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
    package var kind: Kind {
        switch phase {
        case .waitingForAuthentication: .waitingForAuthentication
        case .authorizing: .authorizing
        case .askingProvider: .askingProvider
        case .waitingForProvider: .waitingForProvider
        case .awaitingStepUp, .awaitingStepUpElsewhere: .awaitingStepUp
        }
    }
}
