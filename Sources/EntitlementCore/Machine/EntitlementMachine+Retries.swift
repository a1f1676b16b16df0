/// Retries the service asks for — the one place that decides them. Every backend request sent is
/// noted with its attempt (`EntitlementMachine.handle(_:at:)` notes a step's requests); an answer that
/// says `retry` — a failed request, one decision item, or some items of a pre-authorization — for a
/// request still waited for, with attempts left (`V2RetryPolicy`: at most twice, 0.5 s then 1 s later),
/// starts a timer instead of reaching its region, and the timer sends the request again as it was,
/// under the same operation. Any other answer ends the request.
///
/// Throttling (a `429`) pauses the device: the failure reaches its region as it is, and every request
/// due until the pause ends — `Retry-After`, at least 1 s (Adobe's *Throttling mechanism*: "wait at
/// least one second"), at most `EntitlementMachine.longestThrottlePause` — waits for its end on the
/// same timer, then goes out as it was, still its first attempt.
extension EntitlementMachine {
    /// How often, and after what pause, a request is retried when the service asks.
    static let retryPolicy = V2RetryPolicy()

    /// Notes the backend requests among a step's effects (a resent one keeps its attempt); while the
    /// service's throttle pause runs, each waits for its end instead (attempt 0 until it goes out).
    mutating func noteRequestsSent(_ effects: inout [Action]) {
        let pausedUntil = backendPausedUntil > now ? backendPausedUntil : nil
        var waiting = false
        for index in effects.indices {
            switch effects[index] {
            case .callBackend(let operation, let request), .loadConfiguration(let operation, let request):
                guard let pausedUntil else {
                    if requestsSent[operation] == nil { requestsSent[operation] = (request, 1) }
                    continue
                }
                if requestsSent[operation] == nil { requestsSent[operation] = (request, 0) } else { requestsSent[operation]?.attempt -= 1 }
                effects[index] = .startTimer(.retry(operation), at: pausedUntil)
                waiting = true
            default: break
            }
        }
        if waiting { record(.calls, from: PendingCallKind.idle.rawValue, to: PendingCallKind.idle.rawValue, input: .anyInput, .throttled, [.startTimer]) }
        if pausedUntil == nil, backendPausedUntil != Self.notPaused { backendPausedUntil = Self.notPaused }
    }

    /// A `429`: nothing goes out before `Retry-After` (at least 1 s, at most ``longestThrottlePause``).
    private mutating func pauseBackend(_ error: BackendError) {
        let seconds = min(max(Int64(error.retryAfterSeconds ?? 1), 1), Self.longestThrottlePause.components.seconds)
        let until = now.adding(.seconds(seconds))
        if backendPausedUntil < until { backendPausedUntil = until }
    }

    /// ``backendPausedUntil`` when no pause runs.
    static let notPaused = Timestamp(milliseconds: .min)

    /// For an input that answers a backend request: the retry to run instead of the answer when the
    /// service asked for one, else nil — and the request is answered (no longer noted).
    mutating func retryAsked(by input: Input) -> [Action]? {
        let operation: OperationID
        let retry: [Action]?
        switch input {
        case .configurationLoaded(let answered, _, _, _):
            operation = answered
            retry = nil
        case .configurationFailed(let answered, let error), .backendFailed(let answered, let error):
            operation = answered
            if error.code == .throttled { pauseBackend(error) }
            retry = retryLater(answered, error)
        case .backendAnswered(let answered, let response):
            operation = answered
            retry = retryDecisionItems(answered, response)
        default:
            return nil
        }
        if retry == nil { requestsSent[operation] = nil }
        return retry
    }

    /// Whether the region that sent `operation` still waits for its answer.
    func isAwaited(_ operation: OperationID) -> Bool {
        switch operation.owner {
        case .configuration:
            switch configuration {
            case .configuring(_, operation, _), .signingIn(_, operation, _): true
            default: false
            }
        case .authentication:
            switch authentication {
            case .login(_, .creatingSession(operation)), .login(_, .requestingPartnerSession(operation)),
                .logout(_, .requestingLogout(operation)), .login(_, .readingProfile(operation?, _)),
                .login(_, .awaitingSecondScreen(_, operation?)):
                true
            default: false
            }
        case .authorization: authorizations.contains { $0.operation == operation }
        case .preauthorization: preauthorizations.contains { $0.operation == operation }
        case .account, nil: false
        }
    }

    /// A `retry` error for a request still waited for, with attempts left: send it again after a
    /// pause (nil: the failure is the request's result).
    private mutating func retryLater(_ operation: OperationID, _ error: BackendError) -> [Action]? {
        guard error.code == .retryable, let sent = requestsSent[operation], isAwaited(operation),
            let pause = Self.retryPolicy.pause(before: sent.attempt)
        else { return nil }
        recordCall(.retryAsked, .startTimer)
        return [.startTimer(.retry(operation), at: now.adding(pause))]
    }

    /// Decisions whose items say `retry`: an authorization's one item is retried like a request that
    /// failed with it; a pre-authorization keeps its other items and asks again for those only, after
    /// the pause (nil: the answer is the result).
    private mutating func retryDecisionItems(_ operation: OperationID, _ response: BackendResponse) -> [Action]? {
        guard case .decisions(let decisions) = response, let sent = requestsSent[operation] else { return nil }
        switch sent.request {
        case .authorize:
            guard decisions.count == 1, let error = decisions[0].error, error.action == .retry else { return nil }
            return retryLater(operation, BackendError(v2: error, httpStatus: 200))
        case .preauthorize(let context, let mvpd, let asked):
            guard let index = preauthorizations.firstIndex(where: { $0.operation == operation }) else { return nil }
            let again = decisions.filter { asked.contains($0.resource) && $0.error?.action == .retry }
            guard let first = again.first?.error, let retry = retryLater(operation, BackendError(v2: first, httpStatus: 200)) else {
                return nil
            }
            var pending = preauthorizations[index]
            let retried = Set(again.map(\.resource))
            guard !absorb(decisions.filter { !retried.contains($0.resource) }, into: &pending) else { return nil }
            preauthorizations[index] = pending
            requestsSent[operation]?.request = .preauthorize(context, mvpd: mvpd, resources: asked.filter(retried.contains))
            return retry
        default:
            return nil
        }
    }

    /// The retry (or the throttle pause) is due: the same request again, under the same operation. A
    /// request that waited out a pause goes out even if its region stopped waiting (its answer is then
    /// dropped), so no request is lost to a region that forgot to list it.
    mutating func resend(_ operation: OperationID) -> [Action] {
        guard var sent = requestsSent[operation], sent.attempt == 0 || isAwaited(operation) else {
            requestsSent[operation] = nil
            return [.log(.lateTimerIgnored(.retry(operation)))]
        }
        sent.attempt += 1
        requestsSent[operation] = sent
        recordCall(.retryDue, .resendRequest)
        if case .configuration = sent.request { return [.loadConfiguration(operation, sent.request)] }
        return [.callBackend(operation, sent.request)]
    }
}
