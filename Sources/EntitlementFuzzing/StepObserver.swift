import EntitlementEngine
import Synchronization

/// Watches one engine input by input (the rows each input took and the callbacks it emitted), to
/// check that a refused call changes nothing.
final class StepObserver: Sendable {
    private struct Step {
        var input: Input
        var rows: [TransitionRow] = []
        var answers: [(Callback, [CallID])] = []
    }

    private let steps = Mutex<[Step]>([])

    /// Records one engine event.
    func observe(_ event: EngineEvent) {
        steps.withLock { steps in
            switch event {
            case .inputHandled(let handled, _): steps.append(Step(input: handled.input))
            case .transition(let row): if !steps.isEmpty { steps[steps.count - 1].rows.append(row) }
            case .callbackEmitted(let callback, let answering):
                if !steps.isEmpty { steps[steps.count - 1].answers.append((callback, answering)) }
            default: break
            }
        }
    }

    /// Calls answered by a `status` refusal in the same step whose step still moved a region.
    var refusalsThatChangedSomething: [String] {
        steps.withLock { steps in
            steps.compactMap { step -> String? in
                guard case .callReceived(let id, let call) = step.input else { return nil }
                let answers = step.answers.filter { $0.1.contains(id) }.map(\.0)
                guard answers.count == 1, case .status = answers[0] else { return nil }
                // An expiry noticed before the call is the call's precondition, not its effect.
                let moves = step.rows.filter { $0.from != $0.to && $0.input != "authenticationExpired" }
                guard !moves.isEmpty else { return nil }
                return "the refused call \(call.redactedDescription) moved \(moves.map(\.description))"
            }
        }
    }
}
