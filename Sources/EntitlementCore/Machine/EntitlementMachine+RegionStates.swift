/// The configuration and authentication regions' states. Only this file sets them (`fileprivate(set)`),
/// through the move helpers below, each of which records the ``TransitionRow`` it takes: every change
/// of state is a row, and the compiler refuses any other assignment.
struct RegionStates: Sendable {
    /// The configuration region.
    fileprivate(set) var configuration: ConfigurationState = .unconfigured
    /// The authentication region.
    fileprivate(set) var authentication: AuthenticationState = .unknown
}

extension EntitlementMachine {
    /// The only way the configuration state changes: records the row, then moves.
    mutating func moveConfiguration(
        to next: ConfigurationState, _ condition: TransitionGuard? = nil, _ actions: TransitionAction...
    ) {
        if recordsTransitions {
            record(.configuration, from: configuration.kind.rawValue, to: next.kind.rawValue, input: configurationInput, condition, actions)
        }
        regions.configuration = next
    }

    /// Records a self-transition of the configuration region.
    mutating func stayConfiguration(_ condition: TransitionGuard?, input: TransitionInput? = nil, _ actions: TransitionAction...) {
        guard recordsTransitions else { return }
        let kind = configuration.kind.rawValue
        record(.configuration, from: kind, to: kind, input: input ?? configurationInput, condition, actions)
    }

    /// How the configuration region names the input: every call but `setRequestor` is an `entitlementCall`.
    private var configurationInput: TransitionInput {
        rowInput.isCall && rowInput != .setRequestor ? .entitlementCall : rowInput
    }

    /// The only way the authentication state changes: records the row, then moves.
    mutating func moveAuthentication(
        to next: AuthenticationState, _ condition: TransitionGuard? = nil, _ actions: TransitionAction...
    ) {
        moveAuthentication(to: next, condition, actions)
    }

    /// ``moveAuthentication(to:_:_:)`` with the actions as an array. Leaving or entering
    /// `authenticated` drops the pre-authorization cache: its decisions were for that session.
    /// `input` names the row's input when it is not the input being handled (`authenticationExpired`).
    mutating func moveAuthentication(
        to next: AuthenticationState, _ condition: TransitionGuard?, _ actions: [TransitionAction], input: TransitionInput? = nil
    ) {
        record(.authentication, from: authentication.kind.rawValue, to: next.kind.rawValue, input: input, condition, actions)
        if (authentication.kind == .authenticated) != (next.kind == .authenticated) { preauthorizationCache = [:] }
        regions.authentication = next
        savedFieldsWritten = true
    }
}
