/// Request deadlines: the machine's timers like any other. Each request goes out with a
/// `TimerID.requestDeadline(_:)` (``EngineSettings/requestTimeout`` later) that its answer cancels; when
/// it fires first, the request fails as a timed-out request does — a backend request with
/// `BackendError.timeout`, a configuration with the same, a provider's with
/// ``ProviderFailure/networkFailure`` — through the rows of that failure, and the shell is told to stop it.
extension EntitlementMachine {
    /// `effects` with the deadline of the request `answered` (if any) cancelled first, and each request's
    /// deadline started right after it: one list, built once.
    func withRequestDeadlines(_ effects: [Action], cancelling answered: OperationID?) -> [Action] {
        var timed: [Action] = []
        timed.reserveCapacity(effects.count + 3)
        if let answered { timed.append(.cancelTimer(.requestDeadline(answered))) }
        let deadline = now.adding(settings.requestTimeout)
        for effect in effects {
            timed.append(effect)
            if let operation = effect.request { timed.append(.startTimer(.requestDeadline(operation), at: deadline)) }
        }
        return timed
    }

    /// A request's deadline passed before its answer: it fails as timed out where its region still waits
    /// for it (its rows are those of that failure), and the shell stops it either way.
    mutating func requestDeadlinePassed(_ operation: OperationID) -> [Action] {
        guard let failure = failureAtDeadline(operation) else {
            // No region waits for it any more: the request ends all the same (nothing is sent again).
            if requestsSent[operation] != nil { requestsSent[operation] = nil }
            return [.cancelRequest(operation), .log(.lateTimerIgnored(.requestDeadline(operation)))]
        }
        rowInput = failure.transitionInput
        return [.cancelRequest(operation)] + transition(failure)
    }

    /// The failure a request still waited for gets at its deadline; nil when no region waits for it.
    private func failureAtDeadline(_ operation: OperationID) -> Input? {
        switch operation.owner {
        case .configuration:
            switch configuration {
            case .configuring(_, operation, _): .configurationFailed(operation, .timeout)
            case .signingIn(_, operation, _): .backendFailed(operation, .timeout)
            default: nil
            }
        case .authentication:
            // A login's probe (a read of a login another instance started) is waited for too, though never retried.
            if case .login(let flow, .awaitingRedirect) = authentication, flow.probe == operation { .backendFailed(operation, .timeout) }
            else { isAwaited(operation) ? .backendFailed(operation, .timeout) : nil }
        case .preauthorization:
            isAwaited(operation) ? .backendFailed(operation, .timeout) : nil
        case .authorization:
            switch authorizations.first(where: { $0.operation == operation })?.phase {
            case .authorizing?: .backendFailed(operation, .timeout)
            case .askingProvider?: .providerAnswered(operation, .credentials(.failure(.networkFailure)))
            default: nil
            }
        case .account:
            switch accountWork.values.first(where: { $0.operation == operation }) {
            case .signingIn?: .providerAnswered(operation, .signedIn(.failure(.networkFailure)))
            case .verifying?: .providerAnswered(operation, .verified(.failure(.networkFailure)))
            case .renewing?: .providerAnswered(operation, .renewed(.failure(.networkFailure)))
            case .awaitingRenewal?, nil: nil
            }
        case nil:
            nil
        }
    }
}

extension Action {
    /// The operation of a request that waits for an answer (a backend request, a configuration, a
    /// provider question); nil for any other action.
    var request: OperationID? {
        switch self {
        case .callBackend(let operation, _), .loadConfiguration(let operation, _), .askProvider(let operation, _, _, _): operation
        default: nil
        }
    }
}

extension Input {
    /// The request this input answers (a backend's, a configuration's, a provider's), if any.
    var answeredOperation: OperationID? {
        switch self {
        case .backendAnswered(let operation, _), .backendFailed(let operation, _), .configurationLoaded(let operation, _, _, _),
            .configurationFailed(let operation, _), .providerAnswered(let operation, _):
            operation
        default: nil
        }
    }
}
