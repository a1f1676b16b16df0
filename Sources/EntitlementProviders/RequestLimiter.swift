import Synchronization

/// At most `limit` requests at once; the others wait in arrival order (libPusher's operation queue
/// runs five). Waiting never blocks a thread.
final class RequestLimiter: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    let limit: Int
    private let state = Mutex(State())

    init(limit: Int) { self.limit = max(limit, 1) }

    /// Runs `work` once a place is free.
    func run<Value: Sendable>(_ work: () async -> Value) async -> Value {
        await acquire()
        defer { release() }
        return await work()
    }

    private func acquire() async {
        await withCheckedContinuation { continuation in
            let admitted = state.withLock { state -> Bool in
                guard state.running < limit else {
                    state.waiting.append(continuation)
                    return false
                }
                state.running += 1
                return true
            }
            if admitted { continuation.resume() }
        }
    }

    private func release() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            guard !state.waiting.isEmpty else {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()  // the place passes to the next waiter
        }
        next?.resume()
    }

    /// How many run now (tests).
    var running: Int { state.withLock { $0.running } }
}
