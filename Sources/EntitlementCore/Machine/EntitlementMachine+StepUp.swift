/// Step-ups (policy advice, Adobe's home-based re-authentication): the app is asked, reports back with
/// `completeStepUp`, and the authorization is asked again once with the approved transaction.
///
/// A step-up lives in the store (``PendingStepUp``, `EntitlementMachine+StepUpStore.swift`), so a fleet
/// needs no sticky routing for it: the app's `completeStepUp` finishes it on whichever instance it reaches
/// — that instance asks again and answers it — and the outcome, saved before anyone is told, answers the
/// calls every other instance holds for the same authorization. The transaction is used once across the
/// fleet: only the instance whose save moved the record from waiting to completing asks with it.
extension EntitlementMachine {
    /// One call of a request whose step-up (by its advice) this instance holds or completes: when the
    /// request ends, the callback that answered this call is the step-up's outcome.
    struct StepUpCall: Sendable, Hashable {
        var resource: String
        var data: [String: String]
        var advice: StepUpAdvice
        var call: CallID

        /// Whether this is the call of `record`'s step-up.
        func isOf(_ record: PendingStepUp) -> Bool { record.isFor(resource, data) && record.advice == advice }
    }

    // MARK: - Advice

    /// The answer to the request at `index` (asked as `answered`) carries advice for a step-up: the app is
    /// asked, and the step-up goes to the store (saved before the app is told) — unless the store holds
    /// one for the same authorization that has no outcome yet (another instance asked first): the request
    /// then waits for that one's outcome, as a second request would join the first on one instance.
    mutating func adviseStepUp(
        at index: Int, _ provider: String, _ advice: StepUpAdvice, answered: OperationID, until deadline: Timestamp
    ) -> [Action] {
        let request = authorizations[index]
        let from = request.kind
        if let open = stepUps.first(where: { request.isFor($0) && $0.isOpen(at: now) }) {
            recordAuthorization(from: from, to: .awaitingStepUp, .stepUpPendingElsewhere, .startTimer)
            authorizations[index].phase = .awaitingStepUpElsewhere(answered, open.advice, until: open.expires)
            return [.startTimer(.stepUp(answered), at: open.expires)]
        }
        recordAuthorization(from: from, to: .awaitingStepUp, .stepUpRequired, .stepUpRequired, .startTimer)
        authorizations[index].phase = .awaitingStepUp(provider, advice, answered: answered, until: deadline)
        var records = stepUps.filter { !request.isFor($0) && keeps($0) }
        records.append(
            PendingStepUp(resource: request.resource, data: request.data, provider: provider, advice: advice, phase: .awaiting, expires: deadline))
        stepUps = records
        noteStepUpCall(of: request, advice, request.waiters.first)
        return [.startTimer(.stepUp(answered), at: deadline), .emit(.stepUpRequired(resource: request.resource, advice: advice), answering: [])]
    }

    /// `getAuthorization` or `checkAuthorization` of an authorization whose step-up another instance holds
    /// or completes: the call waits for its outcome here (as it would join the request on that instance).
    mutating func waitForStepUpElsewhere(_ id: CallID, resource: String, data: [String: String]) -> [Action]? {
        guard let record = stepUps.first(where: { $0.isFor(resource, data) && $0.isOpen(at: now) }) else { return nil }
        let operation = nextOperation(.authorization)
        recordAuthorization(from: .idle, to: .awaitingStepUp, .stepUpPendingElsewhere, .startTimer)
        authorizations.append(
            AuthorizationRequest(
                resource: resource, data: data, waiters: [id], phase: .awaitingStepUpElsewhere(operation, record.advice, until: record.expires)))
        return [.startTimer(.stepUp(operation), at: record.expires)]
    }

    /// Notes `call` as the call whose answer is the outcome of `request`'s step-up.
    mutating func noteStepUpCall(of request: AuthorizationRequest, _ advice: StepUpAdvice, _ call: CallID?) {
        forgetStepUpCall(of: request)
        if let call { stepUpCalls.append(StepUpCall(resource: request.resource, data: request.data, advice: advice, call: call)) }
    }

    /// Forgets the call noted for `request`'s step-up (``noteStepUpCall(of:_:_:)``), if any.
    mutating func forgetStepUpCall(of request: AuthorizationRequest) {
        if !stepUpCalls.isEmpty { stepUpCalls.removeAll { request.waiters.contains($0.call) } }
    }

    /// The call noted for `request`'s step-up, if any.
    func stepUpCall(of request: AuthorizationRequest) -> StepUpCall? {
        stepUpCalls.first { request.waiters.contains($0.call) }
    }

    // MARK: - The app's report

    /// The app reports the step-up: retry once with the approved transaction, or fail. The call joins
    /// the authorization and is answered with it. A step-up another instance holds is taken over here.
    mutating func completeStepUp(_ id: CallID, _ resource: String, succeeded: Bool, _ configuration: RequestorConfiguration)
        -> [Action]
    {
        var actions: [Action] = []
        if heldStepUp(of: resource) == nil {
            guard let takenOver = takeOverStepUp(resource) else {
                recordCall(.noStepUpPending, .status)
                return refuse(id, .noStepUpPending(resource: resource))
            }
            actions = takenOver
        }
        guard let index = heldStepUp(of: resource), case .awaitingStepUp(let provider, let advice, let answered, let deadline) = authorizations[index].phase
        else { return actions }
        guard now < deadline else {
            // Its time ran out (its timer has yet to fire): ended as the timer ends it, and the late report is
            // refused — no instance asks with a transaction past its step-up's deadline.
            recordCall(.noStepUpPending, .status)
            return actions + [.cancelTimer(.stepUp(answered))] + endStepUp(at: index, condition: .deadlinePassed, .cancelTimer)
                + refuse(id, .noStepUpPending(resource: resource))
        }
        authorizations[index].waiters.append(id)
        let request = authorizations[index]
        if stepUpCall(of: request) == nil { noteStepUpCall(of: request, advice, id) }
        guard succeeded else {
            authorizations.remove(at: index)
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
        if let record = stepUps.firstIndex(where: { request.isFor($0) && $0.advice == advice }) {
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
            authorizations.remove(at: index)
            recordAuthorization(from: .awaitingStepUp, to: .idle, .notAuthenticated, .cancelTimer, .tokenRequestFailed)
            return actions + [.cancelTimer(.stepUp(answered))]
                + authorizationFailed(request.resource, ErrorCode.userNotAuthenticated, "The user is not authenticated.", answering: request.waiters)
        }
        return actions + [.cancelTimer(.stepUp(answered))]
            + startAuthorizing(at: index, token, from: .awaitingStepUp, condition: .stepUpSucceeded, configuration, also: .cancelTimer)
    }

    /// The request of `resource` that waits for the app's step-up here.
    private func heldStepUp(of resource: String) -> Int? {
        authorizations.firstIndex { request in
            if case .awaitingStepUp = request.phase { return request.resource == resource }
            return false
        }
    }

    /// The store holds a step-up of `resource` waiting for the app, which another instance holds: this
    /// instance holds it from now on (the calls it has waiting for it join), so the app's report is
    /// handled as where the step-up began. Nil when the store holds none.
    private mutating func takeOverStepUp(_ resource: String) -> [Action]? {
        guard let record = stepUps.first(where: { $0.resource == resource && $0.phase == .awaiting && $0.expires > now }) else { return nil }
        let phase = AuthorizationRequest.Phase.awaitingStepUp(record.provider, record.advice, answered: nextOperation(.authorization), until: record.expires)
        if let waiting = authorizations.firstIndex(where: { $0.isFor(record) }),
            case .awaitingStepUpElsewhere(let timer, record.advice, _) = authorizations[waiting].phase
        {
            recordAuthorization(from: .awaitingStepUp, to: .awaitingStepUp, .stepUpPendingElsewhere, .cancelTimer)
            authorizations[waiting].phase = phase
            return [.cancelTimer(.stepUp(timer))]
        }
        recordAuthorization(from: .idle, to: .awaitingStepUp, .stepUpPendingElsewhere)
        authorizations.append(AuthorizationRequest(resource: record.resource, data: record.data, waiters: [], phase: phase))
        return []
    }

    /// The app did not report the step-up in time (or, for a call waiting for another instance's
    /// step-up, its record stopped standing).
    mutating func stepUpTimedOut(_ answered: OperationID) -> [Action] {
        guard let index = authorizations.firstIndex(where: { request in
            switch request.phase {
            case .awaitingStepUp(_, _, let operation, _), .awaitingStepUpElsewhere(let operation, _, _): operation == answered
            default: false
            }
        }) else { return [.log(.lateTimerIgnored(.stepUp(answered)))] }
        return endStepUp(at: index, condition: nil)
    }

    /// The request at `index` ends: its step-up was not completed in time.
    private mutating func endStepUp(at index: Int, condition: TransitionGuard?, _ extra: TransitionAction? = nil) -> [Action] {
        let request = authorizations.remove(at: index)
        if let extra {
            recordAuthorization(from: .awaitingStepUp, to: .idle, condition, extra, .tokenRequestFailed)
        } else {
            recordAuthorization(from: .awaitingStepUp, to: .idle, condition, .tokenRequestFailed)
        }
        return request.waiters.map {
            .emit(
                .tokenRequestFailed(
                    resource: request.resource, errorCode: ErrorCode.stepUpTimedOut, errorDescription: "The step-up was not completed in time."),
                answering: [$0])
        }
    }
}
