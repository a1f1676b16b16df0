/// Every input a row can name: the calls, the other inputs, and two the regions name specially.
package enum TransitionInput: String, Sendable, CaseIterable {
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
    /// Any input: the entitlements region looks at the outcome of every one, and a backend request any
    /// input makes waits out the service's throttle pause.
    case anyInput
    /// The stored authentication expired (noticed before a call).
    case authenticationExpired
    /// Shared storage changed under this instance.
    case storageChanged
    /// A save of the tokens failed.
    case storageWriteFailed
    /// A call's step could not be saved, so it was not taken.
    case callNotSaved
    /// A call could not be decided: the store could not be read.
    case callNotRead
    /// A renewal could not be marked in the store, so it was not started.
    case renewalNotMarked
    /// The platform's provider picker answered.
    case platformPickerAnswered
    /// The platform said whether it is signed in (at `setRequestor`).
    case platformSignInChecked
    /// Whoever runs the engine stopped waiting for the provider choice.
    case providerChoiceAbandoned
}

extension Input {
    /// The input as rows name it: a call, or the input case.
    package var transitionInput: TransitionInput {
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
        case .callNotRead: .callNotRead
        case .renewalNotMarked: .renewalNotMarked
        case .platformPickerAnswered: .platformPickerAnswered
        case .platformSignInChecked: .platformSignInChecked
        case .providerChoiceAbandoned: .providerChoiceAbandoned
        }
    }

    /// The input's name in rows: a call's name, or the input case.
    package var name: String { transitionInput.rawValue }
}

extension EntitlementCall {
    /// The call as rows name it.
    package var transitionInput: TransitionInput {
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
    package var isCall: Bool {
        switch self {
        case .setRequestor, .checkAuthentication, .getAuthentication, .setSelectedProvider, .handleExternalURL, .getSelectedProvider,
            .checkAuthorization, .getAuthorization, .checkPreauthorizedResources, .getMetadata, .logout, .signIn, .signOut,
            .completeStepUp:
            true
        case .entitlementCall, .optionsChanged, .configurationLoaded, .configurationFailed, .flowSecretsDrawn, .backendAnswered,
            .backendFailed, .timerFired, .providerAnswered, .anyInput, .authenticationExpired, .storageChanged, .storageWriteFailed,
            .callNotSaved, .callNotRead, .renewalNotMarked, .platformPickerAnswered, .platformSignInChecked, .providerChoiceAbandoned:
            false
        }
    }
}
