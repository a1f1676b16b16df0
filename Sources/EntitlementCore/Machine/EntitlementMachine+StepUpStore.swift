/// Step-ups in the store a fleet shares (``PendingStepUp``): what an instance takes up from it, what it
/// publishes to it, and how its calls follow a step-up another instance holds, completes or ended.
///
/// One record per authorization (resource and `data`), known by its advice: a new step-up replaces one
/// that ended. Each instance's calls follow the record of the advice they wait for; when the store holds
/// another (theirs ended and a newer one began), a call waiting for the app joins the newer one, and a
/// retry asking with the older transaction ends.
extension EntitlementMachine {
    /// How long a step-up being completed stands: the retry, and a renewal before it, each within the
    /// request deadline.
    var stepUpRetryWait: Duration { settings.requestTimeout * 3 }

    /// Whether the store keeps `record`: an answered step-up until it expires; one without an answer a
    /// retry's wait longer — only its holder's timer times it out, and a logout elsewhere must still find
    /// it to end it, however late that timer fires.
    func keeps(_ record: PendingStepUp) -> Bool {
        record.isUnanswered ? record.expires.adding(stepUpRetryWait) > now : record.expires > now
    }

    /// Takes up the step-ups the store holds (they replace this instance's view), before the rest of what it
    /// says is followed; returns the view they replaced (``followStepUps(before:)``).
    mutating func adoptStepUps(_ stored: [PendingStepUp]) -> [PendingStepUp] {
        let before = stepUps
        let standing = stored.filter(keeps)
        if standing != before { stepUps = standing }
        return before
    }

    /// After the store's change was followed (a logout there has ended every request here): a call here
    /// that waits for a step-up another instance completes or ended is answered with its outcome, or joins
    /// a newer one; a retry here whose step-up ended elsewhere ends too; a step-up this instance holds and
    /// the store lost (`before` still has it) is saved again.
    mutating func followStepUps(before: [PendingStepUp]) -> [Action] {
        var records = stepUps
        var actions: [Action] = []
        var index = authorizations.startIndex
        while index < authorizations.endIndex {
            let request = authorizations[index]
            let record = records.first(where: request.isFor)
            switch request.phase {
            case .awaitingStepUp(_, let advice, let timer, let deadline):
                guard let record else {
                    // Held here and lost by the store (a write it forgot): saved again while it stands.
                    if now < deadline, let mine = before.first(where: { request.isFor($0) && $0.advice == advice }) { records.append(mine) }
                    break
                }
                if record.advice == advice, record.phase == .awaiting { break }
                actions += follow(at: index, timer, until: nil, record)
                continue
            case .awaitingStepUpElsewhere(let timer, let advice, let until):
                guard let record else {
                    actions += answerStepUp(
                        at: index, timer, .failed(code: ErrorCode.stepUpFailed, description: "The step-up ended on another instance."))
                    continue
                }
                if record.advice == advice, record.isUnanswered, record.expires == until { break }
                actions += follow(at: index, timer, until: until, record)
                continue
            case .askingProvider, .authorizing:
                // Asking again with the transaction here, while another instance ended the step-up (a logout there).
                guard request.steppedUp, let held = stepUpCall(of: request) else { break }
                if let record, held.isOf(record) {
                    guard case .answered(let outcome) = record.phase else { break }
                    actions += answerStepUp(at: index, nil, outcome)
                } else {
                    actions += answerStepUp(
                        at: index, nil, .failed(code: ErrorCode.stepUpFailed, description: "The step-up ended on another instance."))
                }
                continue
            default:
                break
            }
            index += 1
        }
        if records != stepUps { stepUps = records }
        return actions
    }

    /// The request at `index` waits (with `timer`, `until` when it waits for another instance) for a step-up
    /// whose record now says otherwise: it ends with the outcome the record holds, or waits for the record
    /// — completed elsewhere, or a newer step-up — as long as it stands.
    private mutating func follow(at index: Int, _ timer: OperationID, until: Timestamp?, _ record: PendingStepUp) -> [Action] {
        if case .answered(let outcome) = record.phase { return answerStepUp(at: index, timer, outcome) }
        guard record.isOpen(at: now) else {
            return answerStepUp(at: index, timer, .failed(code: ErrorCode.stepUpFailed, description: "The step-up ended on another instance."))
        }
        let request = authorizations[index]
        let condition: TransitionGuard = record.phase == .completing ? .stepUpCompletingElsewhere : .stepUpPendingElsewhere
        recordAuthorization(from: .awaitingStepUp, to: .awaitingStepUp, condition, .cancelTimer, .startTimer)
        forgetStepUpCall(of: request)
        let operation = nextOperation(.authorization)
        authorizations[index].phase = .awaitingStepUpElsewhere(operation, record.advice, until: record.expires)
        return [.cancelTimer(.stepUp(timer)), .startTimer(.stepUp(operation), at: record.expires)]
    }

    /// The request at `index` ends with the step-up's outcome, as another instance published it: one that
    /// waited for it (its `timer` cancelled), or one this instance asks with the transaction (its answer,
    /// when it comes, is late).
    private mutating func answerStepUp(at index: Int, _ timer: OperationID?, _ outcome: PendingStepUp.Outcome) -> [Action] {
        let request = authorizations.remove(at: index)
        forgetStepUpCall(of: request)
        let cancel: [Action] = timer.map { [.cancelTimer(.stepUp($0))] } ?? []
        switch outcome {
        case .token(let token):
            recordAuthorization(from: request.kind, to: .idle, .stepUpGrantedElsewhere, .cancelTimer, .setToken)
            return cancel + request.waiters.map { .emit(.setToken(token: token, resource: request.resource), answering: [$0]) }
        case .failed(let code, let description):
            if timer == nil {
                recordAuthorization(from: request.kind, to: .idle, .stepUpEndedElsewhere, .tokenRequestFailed)
            } else {
                recordAuthorization(from: request.kind, to: .idle, .stepUpEndedElsewhere, .cancelTimer, .tokenRequestFailed)
            }
            return cancel
                + request.waiters.map {
                    .emit(.tokenRequestFailed(resource: request.resource, errorCode: code, errorDescription: description), answering: [$0])
                }
        }
    }

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
            guard let index = stepUps.firstIndex(where: held.isOf), stepUps[index].isUnanswered else { continue }
            stepUps[index].phase = .answered(outcome)
            stepUps[index].expires = max(stepUps[index].expires, now).adding(settings.requestTimeout)
        }
    }

    /// Ends every step-up of the device not ended yet with `outcome` (a logout): the calls any instance
    /// holds for one are answered with it, and a report of one finds nothing pending. (Past its deadline
    /// too: its holder may not have seen its time run out yet.)
    mutating func endStepUps(_ outcome: PendingStepUp.Outcome) {
        guard stepUps.contains(where: \.isUnanswered) else { return }
        stepUps = stepUps.map { record in
            guard record.isUnanswered else { return record }
            var ended = record
            ended.phase = .answered(outcome)
            ended.expires = max(record.expires, now).adding(settings.requestTimeout)
            return ended
        }
    }
}
