/// Backend answers: each goes to the region that sent its request (the operation's owner).
extension EntitlementMachine {
    /// A backend answer goes to the region that sent the request; it is late unless that region
    /// still waits for this very operation.
    mutating func backendFinished(_ operation: OperationID, _ result: Result<BackendResponse, BackendError>)
        -> [Action]
    {
        var late: [Action] { [.log(.lateResultIgnored(operation))] }  // made only when the answer is late
        switch (operation.owner, configuration) {
        case (.configuration, .signingIn(let loaded, operation, let calls)):
            return silentExchangeFinished(loaded, calls: calls, result)
        case (.authentication, .configured(let configuration)):
            return authenticationAnswered(operation, result, configuration) ?? late
        case (.authorization, .configured(let configuration)):
            guard let index = authorizations.firstIndex(where: { $0.operation == operation }) else { return late }
            return authorizationStepFinished(index, result, configuration)
        case (.preauthorization, .configured):
            guard let index = preauthorizations.firstIndex(where: { $0.operation == operation }) else { return late }
            return preauthorizationFinished(preauthorizations.remove(at: index), result)
        default:
            return late
        }
    }

    /// A backend answer for the login or logout flow, if the flow still waits for `operation`.
    private mutating func authenticationAnswered(
        _ operation: OperationID, _ result: Result<BackendResponse, BackendError>, _ configuration: RequestorConfiguration
    ) -> [Action]? {
        switch authentication {
        case .login(let flow, .creatingSession(operation)): sessionAnswered(flow, result, configuration)
        case .login(let flow, .requestingPartnerSession(operation)): partnerSessionAnswered(flow, result, configuration)
        case .login(let flow, .readingProfile(operation?, let attempt)): profileAnswered(flow, attempt: attempt, result, configuration)
        case .login(let flow, .awaitingRedirect) where flow.probe == operation: probeAnswered(flow, result, configuration)
        case .login(let flow, .awaitingSecondScreen(let code, operation?)): pollAnswered(flow, code, result, configuration)
        case .logout(let flow, .requestingLogout(operation)): logoutAnswered(flow, result)
        default: nil
        }
    }
}
