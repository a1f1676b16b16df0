import Synchronization

/// Counts engines coming to rest during a shutdown and answers the waiting shutdown once: when all
/// have, or when the wait ends early (the grace period is over, or the shutdown's task was
/// cancelled) — in whatever order the count, the end and the wait arrive.
final class SettleTally: Sendable {
    private struct State {
        var settled = 0
        var ended = false
        var waiting: CheckedContinuation<Int, Never>?
    }

    private let state = Mutex(State())
    private let expected: Int

    init(expecting expected: Int) { self.expected = expected }

    /// Waits until every engine came to rest or the wait was ended; how many came to rest.
    func wait() async -> Int {
        await withCheckedContinuation { continuation in
            state.withLock { state in
                if state.ended || state.settled >= expected {
                    continuation.resume(returning: state.settled)
                } else {
                    state.waiting = continuation
                }
            }
        }
    }

    /// Counts one; answers the waiting shutdown when that was the last.
    func settledOne() {
        state.withLock { state in
            state.settled += 1
            guard state.settled >= expected, let waiting = state.waiting else { return }
            state.waiting = nil
            waiting.resume(returning: state.settled)
        }
    }

    /// The grace period is over, or the shutdown was cancelled: answers with the count so far (unless
    /// already answered), and a wait that starts later returns at once.
    func end() {
        state.withLock { state in
            state.ended = true
            state.waiting?.resume(returning: state.settled)
            state.waiting = nil
        }
    }
}
