/// Tasks an actor of the test tools keeps waiting for a condition on its state (requests held or parked):
/// each wait ends when its condition holds, when the actor lets every waiter go, or when the waiting task
/// is cancelled — a test whose awaited request never comes ends with its task (a time limit, a cancelled
/// run), it does not wait forever.
struct Watchers<Condition> {
    private var waiting: [(id: UInt64, condition: Condition, resume: CheckedContinuation<Void, Never>)] = []
    private var lastID: UInt64 = 0

    /// An id for the next waiter.
    mutating func nextID() -> UInt64 {
        lastID += 1
        return lastID
    }

    /// Keeps `resume` waiting until `condition` holds.
    mutating func add(_ id: UInt64, _ condition: Condition, _ resume: CheckedContinuation<Void, Never>) {
        waiting.append((id, condition, resume))
    }

    /// Lets every waiter whose condition holds go.
    mutating func resume(where holds: (Condition) -> Bool) {
        var still: [(id: UInt64, condition: Condition, resume: CheckedContinuation<Void, Never>)] = []
        for waiter in waiting {
            if holds(waiter.condition) { waiter.resume.resume() } else { still.append(waiter) }
        }
        waiting = still
    }

    /// Lets waiter `id` go (its task was cancelled); nothing when it went already.
    mutating func resume(id: UInt64) {
        guard let index = waiting.firstIndex(where: { $0.id == id }) else { return }
        waiting.remove(at: index).resume.resume()
    }

    /// Lets every waiter go.
    mutating func resumeAll() { resume { _ in true } }
}

/// An actor of the test tools that keeps ``Watchers``: its waits share one way of ending on cancellation.
protocol Watching: Actor {
    associatedtype Condition
    var watchers: Watchers<Condition> { get set }
}

extension Watching {
    /// Waits until `condition` holds (the actor's ``Watchers/resume(where:)`` lets it go), the actor lets
    /// every waiter go, or the calling task is cancelled.
    func watch(for condition: Condition) async {
        guard !Task.isCancelled else { return }
        let id = watchers.nextID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { watchers.add(id, condition, $0) }
        } onCancel: {
            Task { await self.stopWatching(id) }
        }
    }

    private func stopWatching(_ id: UInt64) { watchers.resume(id: id) }
}
