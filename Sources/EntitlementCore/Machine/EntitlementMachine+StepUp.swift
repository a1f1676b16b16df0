/// Step-ups (policy advice, Adobe's home-based re-authentication): the app is asked, reports back with
/// `completeStepUp`, and the authorization is asked again once with the approved transaction.
///
/// A step-up lives in the store (``PendingStepUp``), so a fleet needs no sticky routing for it: the app's
/// `completeStepUp` finishes it on whichever instance it reaches — that instance asks again and answers
/// it — and the outcome, saved before anyone is told, answers the calls every other instance holds
/// for the same authorization (``adoptStepUps(_:)``, ``followStepUps(before:)``). The transaction is used once across the fleet:
/// only the instance whose save moved the record from waiting to completing asks with it.
extension EntitlementMachine {
    /// One call of a request whose step-up this instance holds or completes: when the request ends, the
    /// callback that answered this call is the step-up's outcome.
    struct StepUpCall: Sendable, Hashable {
        var resource: String
        var data: [String: String]
        var call: CallID
    }

    /// How long a step-up being completed stands: the retry, and a renewal before it, each within the
    /// request deadline.
    var stepUpRetryWait: Duration { settings.requestTimeout * 3 }

    // MARK: - Advice

    /// The request at `index` now waits for the app's step-up until `deadline`: its record goes to the store
    /// (saved before the app is asked), held by this instance.
    mutating func holdStepUp(at index: Int, _ provider: String, _ advice: StepUpAdvice, until deadline: Timestamp) {
        let request = authorizations[index]
        var records = stepUps.filter { !request.isFor($0) && $0.expires > now }
        records.append(
            PendingStepUp(resource: request.resource, data: request.data, provider: provider, advice: advice, phase: .awaiting, expires: deadline))
        stepUps = records
        stepUpCalls.removeAll { $0.resource == request.resource && $0.data == request.data }
        if let call = request.waiters.first { stepUpCalls.append(StepUpCall(resource: request.resource, data: request.data, call: call)) }
    }

    /// `getAuthorization` or `checkAuthorization` of an authorization whose step-up another instance holds
    /// or completes: the call waits for its outcome here (as it would join the request on that instance).
    mutating func waitForStepUpElsewhere(_ id: CallID, resource: String, data: [String: String]) -> [Action]? {
        guard let record = stepUps.first(where: { $0.isFor(resource, data) && $0.isOpen(at: now) }) else { return nil }
        let operation = nextOperation()
        recordAuthorization(from: .idle, to: .awaitingStepUp, .stepUpPendingElsewhere, .startTimer)
        authorizations.append(
            AuthorizationRequest(resource: resource, data: data, waiters: [id], phase: .awaitingStepUpElsewhere(operation, until: record.expires)))
        return [.startTimer(.stepUp(operation), at: record.expires)]
    }

    // MARK: - The app's report

    /// The app reports the step-up: retry once with the approved transaction, or fail. The call joins
    /// the authorization and is answered with it. A step-up another instance holds is taken over here.
    mutating func completeStepUp(_ id: CallID, _ resource: String, succeeded: Bool, _ configuration: RequestorConfiguration)
        -> [Action]
    {
        var actions: [Action] = []
        if !authorizations.contains(where: { request in
            if case .awaitingStepUp = request.phase { return request.resource == resource }
            return false
        }) {
            guard let takenOver = takeOverStepUp(resource) else {
                recordCall(.noStepUpPending, .status)
                return refuse(id, .noStepUpPending(resource: resource))
            }
            actions = takenOver
        }
        guard let index = authorizations.firstIndex(where: { request in
            if case .awaitingStepUp = request.phase { return request.resource == resource }
            return false
        }), case .awaitingStepUp(let provider, let advice, let answered) = authorizations[index].phase
        else { return actions }
        authorizations[index].waiters.append(id)
        let request = authorizations[index]
        if !stepUpCalls.contains(where: { $0.resource == request.resource && $0.data == request.data }) {
            stepUpCalls.append(StepUpCall(resource: request.resource, data: request.data, call: id))
        }
        guard succeeded else {
            let request = authorizations.remove(at: index)
            recordAuthorization(from: .awaitingStepUp, to: .idle, .stepUpFailed, .cancelTimer, .tokenRequestFailed)
            return actions + [.cancelTimer(.stepUp(answered))]
                + request.waiters.map {
                    .emit(
                        .tokenRequestFailed(
                            resource: request.resource, errorCode: ErrorCode.stepUpFailed, errorDescription: "The step-up was not completed."),
                        answering: [$0])
                }
        }
        authorizations[index].steppedUp = true
        authorizations[index].transactionID = advice.transactionID
        if let record = stepUps.firstIndex(where: authorizations[index].isFor) {
            // Taken: no other instance asks with this transaction, and the calls they hold wait for the outcome.
            stepUps[record].phase = .completing
            stepUps[record].expires = now.adding(stepUpRetryWait)
        }
        guard provider == ProviderLink.tvProviderID else {
            return actions + [.cancelTimer(.stepUp(answered))]
                + startAsking(at: index, provider, from: .awaitingStepUp, .stepUpSucceeded, configuration, also: .cancelTimer)
        }
        // The TV provider's re-authentication: the decision is asked again with the login the app made.
        guard case .authenticated(let token) = authentication else {
            let request = authorizations.remove(at: index)
            recordAuthorization(from: .awaitingStepUp, to: .idle, .notAuthenticated, .cancelTimer, .tokenRequestFailed)
            return actions + [.cancelTimer(.stepUp(answered))]
                + authorizationFailed(request.resource, ErrorCode.userNotAuthenticated, "The user is not authenticated.", answering: request.waiters)
        }
        return actions + [.cancelTimer(.stepUp(answered))]
            + startAuthorizing(at: index, token, from: .awaitingStepUp, condition: .stepUpSucceeded, configuration, also: .cancelTimer)
    }

    /// The store holds a step-up of `resource` waiting for the app, which another instance holds: this
    /// instance holds it from now on (the calls it has waiting for it join), so the app's report is
    /// handled as where the step-up began. Nil when the store holds none.
    private mutating func takeOverStepUp(_ resource: String) -> [Action]? {
        guard let record = stepUps.first(where: { $0.resource == resource && $0.phase == .awaiting && $0.expires > now }) else { return nil }
        let operation = nextOperation()
        let phase = AuthorizationRequest.Phase.awaitingStepUp(record.provider, record.advice, answered: operation)
        var actions: [Action] = []
        if let waiting = authorizations.firstIndex(where: { $0.isFor(record) }), case .awaitingStepUpElsewhere(let timer, _) = authorizations[waiting].phase {
            recordAuthorization(from: .awaitingStepUp, to: .awaitingStepUp, .stepUpPendingElsewhere, .cancelTimer)
            actions.append(.cancelTimer(.stepUp(timer)))
            authorizations[waiting].phase = phase
        } else {
            recordAuthorization(from: .idle, to: .awaitingStepUp, .stepUpPendingElsewhere)
            authorizations.append(AuthorizationRequest(resource: record.resource, data: record.data, waiters: [], phase: phase))
        }
        return actions
    }

    /// The app did not report the step-up in time (or, for a call waiting for another instance's
    /// step-up, its record stopped standing).
    mutating func stepUpTimedOut(_ answered: OperationID) -> [Action] {
        guard let index = authorizations.firstIndex(where: { request in
            switch request.phase {
            case .awaitingStepUp(_, _, let operation), .awaitingStepUpElsewhere(let operation, _): operation == answered
            default: false
            }
        }) else { return [.log(.lateTimerIgnored(.stepUp(answered)))] }
        let request = authorizations.remove(at: index)
        recordAuthorization(from: .awaitingStepUp, to: .idle, nil, .tokenRequestFailed)
        return request.waiters.map {
            .emit(
                .tokenRequestFailed(
                    resource: request.resource, errorCode: ErrorCode.stepUpTimedOut, errorDescription: "The step-up was not completed in time."),
                answering: [$0])
        }
    }

    // MARK: - The fleet

    /// After every step, while this instance holds or completes a step-up: a request of one that ended
    /// (answered, failed, timed out, aborted) publishes its outcome — the callback its call was given —
    /// so the calls other instances hold for it are answered alike. Saved before the callbacks are told.
    mutating func publishStepUpOutcomes(_ effects: [Action]) {
        var ended: [(StepUpCall, PendingStepUp.Outcome)] = []
        let requests = authorizations
        stepUpCalls.removeAll { held in
            guard !requests.contains(where: { $0.waiters.contains(held.call) }) else { return false }
            let outcome =
                effects.lazy.compactMap { action -> PendingStepUp.Outcome? in
                    guard case .emit(let callback, let answering) = action, answering == [held.call] else { return nil }
                    switch callback {
                    case .setToken(let token, _): return .token(token)
                    case .tokenRequestFailed(_, let code, let description): return .failed(code: code, description: description)
                    default: return nil
                    }
                }.first ?? .failed(code: ErrorCode.stepUpFailed, description: "The step-up was not completed.")
            ended.append((held, outcome))
            return true
        }
        for (held, outcome) in ended {
            guard let index = stepUps.firstIndex(where: { $0.isFor(held.resource, held.data) }) else { continue }
            if case .answered = stepUps[index].phase { continue }
            stepUps[index].phase = .answered(outcome)
            stepUps[index].expires = max(stepUps[index].expires, now).adding(settings.requestTimeout)
        }
    }

    /// Takes up the step-ups the store holds (they replace this instance's view), before the rest of what it
    /// says is followed; returns the view they replaced (``followStepUps(before:)``).
    mutating func adoptStepUps(_ stored: [PendingStepUp]) -> [PendingStepUp] {
        let before = stepUps
        let standing = stored.filter { $0.expires > now }
        if standing != before { stepUps = standing }
        return before
    }

    /// After the store's change was followed (a logout there has ended every request here): a call here
    /// that waits for a step-up another instance completes or ended is answered with its outcome; a
    /// step-up this instance holds and the store lost (`before` still has it) is saved again.
    mutating func followStepUps(before: [PendingStepUp]) -> [Action] {
        var records = stepUps
        var actions: [Action] = []
        var index = authorizations.startIndex
        while index < authorizations.endIndex {
            let request = authorizations[index]
            let record = records.first(where: request.isFor)
            switch (request.phase, record?.phase) {
            case (.awaitingStepUp, nil):
                // Held here and lost by the store (a write it forgot): saved again.
                if let mine = before.first(where: request.isFor) { records.append(mine) }
            case (.awaitingStepUp(_, _, let timer), .completing?), (.awaitingStepUpElsewhere(let timer, _), .completing?):
                guard let record, request.phase != .awaitingStepUpElsewhere(timer, until: record.expires) else { break }
                // Another instance took the app's report and asks again: its outcome is waited for, as long as that may take.
                recordAuthorization(from: .awaitingStepUp, to: .awaitingStepUp, .stepUpCompletingElsewhere, .cancelTimer, .startTimer)
                stepUpCalls.removeAll { $0.resource == request.resource && $0.data == request.data }
                let operation = nextOperation()
                authorizations[index].phase = .awaitingStepUpElsewhere(operation, until: record.expires)
                actions += [.cancelTimer(.stepUp(timer)), .startTimer(.stepUp(operation), at: record.expires)]
            case (.awaitingStepUp(_, _, let timer), .answered(let outcome)?), (.awaitingStepUpElsewhere(let timer, _), .answered(let outcome)?):
                actions += answerStepUp(at: index, timer, outcome)
                continue
            case (.awaitingStepUpElsewhere(let timer, _), nil):
                actions += answerStepUp(
                    at: index, timer, .failed(code: ErrorCode.stepUpFailed, description: "The step-up ended on another instance."))
                continue
            default:
                break
            }
            index += 1
        }
        if records != stepUps { stepUps = records }
        return actions
    }

    /// The request at `index` ends with the step-up's outcome, as another instance published it.
    private mutating func answerStepUp(at index: Int, _ timer: OperationID, _ outcome: PendingStepUp.Outcome) -> [Action] {
        let request = authorizations.remove(at: index)
        stepUpCalls.removeAll { $0.resource == request.resource && $0.data == request.data }
        let callbacks: [Action]
        switch outcome {
        case .token(let token):
            recordAuthorization(from: .awaitingStepUp, to: .idle, .stepUpGrantedElsewhere, .cancelTimer, .setToken)
            callbacks = request.waiters.map { .emit(.setToken(token: token, resource: request.resource), answering: [$0]) }
        case .failed(let code, let description):
            recordAuthorization(from: .awaitingStepUp, to: .idle, .stepUpEndedElsewhere, .cancelTimer, .tokenRequestFailed)
            callbacks = request.waiters.map {
                .emit(.tokenRequestFailed(resource: request.resource, errorCode: code, errorDescription: description), answering: [$0])
            }
        }
        return [.cancelTimer(.stepUp(timer))] + callbacks
    }
}
