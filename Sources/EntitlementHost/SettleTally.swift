import Synchronization

/// Counts engines coming to rest during a shutdown and answers the waiting shutdown once: when all
/// have, or when the grace period ends.
final class SettleTally: Sendable {
    private let state: Mutex<(settled: Int, waiting: CheckedContinuation<Int, Never>?)>
    private let expected: Int

    init(expecting expected: Int) {
        self.expected = expected
        state = Mutex((0, nil))
    }

    func wait(_ continuation: CheckedContinuation<Int, Never>) { state.withLock { $0.waiting = continuation } }

    /// Counts one; true when that was the last and the waiting shutdown was answered.
    func settledOne() -> Bool {
        state.withLock { state in
            state.settled += 1
            guard state.settled == expected, let waiting = state.waiting else { return false }
            state.waiting = nil
            waiting.resume(returning: state.settled)
            return true
        }
    }

    /// The grace period is over: answers with the count so far (unless already answered).
    func end() {
        state.withLock { state in
            state.waiting?.resume(returning: state.settled)
            state.waiting = nil
        }
    }
}
