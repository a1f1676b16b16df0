import Synchronization

/// At most ``limit`` holders of a turn at once — exchanges with one host (the V2 transport, which measures
/// the wait, so time spent queueing is told apart from time the service takes), requests to one
/// authorization server (libPusher's operation queue runs five) — the others wait their turn in order,
/// never blocking a thread; a waiter whose task is cancelled leaves the line at once.
package final class TurnGate: Sendable {
    private struct State {
        var inUse = 0
        var waiters: [(id: UInt64, turn: CheckedContinuation<Bool, Never>)] = []
        var lastID: UInt64 = 0
    }

    /// How many may hold a turn at once.
    package let limit: Int
    private let state = Mutex(State())

    /// A gate of `limit` turns (at least one).
    package init(limit: Int) { self.limit = max(1, limit) }

    /// How many hold a turn and how many wait.
    package var counts: (running: Int, waiting: Int) { state.withLock { ($0.inUse, $0.waiters.count) } }

    /// Runs `work` in a turn; `cancelled`, without running it, when the calling task is cancelled first.
    package func run<Value: Sendable>(_ work: () async -> Value, cancelled: Value) async -> Value {
        guard await enter() else { return cancelled }
        defer { leave() }
        return await work()
    }

    /// Waits for a turn: true when it is taken (give it back with ``leave()``), false when the task
    /// was cancelled first.
    package func enter() async -> Bool {
        let id: UInt64? = state.withLock { state in
            if state.inUse < limit {
                state.inUse += 1
                return nil
            }
            state.lastID &+= 1
            return state.lastID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (turn: CheckedContinuation<Bool, Never>) in
                // A cancellation before the waiter is in line finds nothing to remove: it is seen here.
                let now: Bool? = state.withLock { state in
                    if Task.isCancelled { return false }
                    if state.inUse < limit {
                        state.inUse += 1
                        return true
                    }
                    state.waiters.append((id, turn))
                    return nil
                }
                if let now { turn.resume(returning: now) }
            }
        } onCancel: {
            let turn = state.withLock { state -> CheckedContinuation<Bool, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).turn
            }
            turn?.resume(returning: false)
        }
    }

    /// Gives a turn back: to the first waiter, if any.
    package func leave() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            guard !state.waiters.isEmpty else {
                state.inUse -= 1
                return nil
            }
            return state.waiters.removeFirst().turn
        }
        next?.resume(returning: true)
    }
}
