/// What a caller of ``AccessEnabler`` can wait for.
enum EngineCondition: Hashable, Sendable {
    /// The work queued with this ticket has run (a call's synchronous callbacks were delivered).
    case ticketRun(UInt64)
    /// No backend request, platform question or input is pending (``AccessEnabler/whenIdle()``).
    case idle
    /// No platform picker or sign-in check is pending and their answers were handled.
    case platformAnswered
    /// No platform sign-in check is pending and their answers were handled (a picker may be open).
    case platformChecked
    /// No provider of the chain is being asked.
    case providersAnswered
    /// The answer to this operation was fed to the machine and its actions ran.
    case finished(OperationID)
    /// Nothing runs (``AccessEnabler/whenAtRest()`` but for callers awaiting answers).
    case quiet
    /// At rest: nothing runs and no caller awaits an answer.
    case atRest
}

/// The callers suspended in an ``AccessEnabler`` until a condition holds — one list for every wait of
/// the actor. The actor resumes a condition's waiters when it starts to hold, all of them when it
/// closes, and one waiter whose task was cancelled (every wait ends).
struct EngineWaiters {
    private var waiting: [EngineCondition: [(id: UInt64, resume: CheckedContinuation<Void, Never>)]] = [:]
    private var lastID: UInt64 = 0

    /// Whether anyone waits for `condition`.
    func isWaiting(for condition: EngineCondition) -> Bool { waiting[condition] != nil }

    /// A new waiter's id.
    mutating func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// Keeps `resume` until `condition` holds.
    mutating func add(_ condition: EngineCondition, id: UInt64, _ resume: CheckedContinuation<Void, Never>) {
        waiting[condition, default: []].append((id, resume))
    }

    /// Resumes everyone waiting for `condition`.
    mutating func resume(_ condition: EngineCondition) {
        guard let waiters = waiting.removeValue(forKey: condition) else { return }
        for waiter in waiters { waiter.resume.resume() }
    }

    /// Resumes everyone waiting for a condition that `holds`.
    mutating func resume(where holds: (EngineCondition) -> Bool) {
        for condition in waiting.keys where holds(condition) { resume(condition) }
    }

    /// Lets go of the storage the emptied list keeps.
    mutating func releaseEmptiedStorage() {
        if waiting.isEmpty { waiting = [:] }
    }

    /// Resumes the waiter `id` (its task was cancelled), if it still waits.
    mutating func resume(id: UInt64) {
        for (condition, waiters) in waiting {
            guard let index = waiters.firstIndex(where: { $0.id == id }) else { continue }
            var rest = waiters
            let waiter = rest.remove(at: index)
            waiting[condition] = rest.isEmpty ? nil : rest
            waiter.resume.resume()
            return
        }
    }
}
