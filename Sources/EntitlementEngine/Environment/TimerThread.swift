import Dispatch
import EntitlementSupport
import Synchronization

/// The thread that fires ``SystemClock``'s timers: one for the process, its timers a heap of deadlines.
/// A timer is a deadline and its work, not a Dispatch timer source: with a source made and cancelled per
/// backend request, a fleet node under load stopped inside libdispatch's timer code
/// (`_dispatch_source_refs_finalize_unregistration`, "Source finalized twice"). Cancelling lets go of
/// the work at once; the deadline left in the heap is dropped when it comes up, or sooner when such
/// deadlines are most of the heap.
final class TimerThread: Sendable {
    /// The process's timer thread (started with the first timer).
    static let shared = TimerThread()

    /// A deadline in the heap: the timer `id`, due at `deadline` (milliseconds of the monotonic clock
    /// since ``origin``).
    private struct Deadline {
        var deadline: Int64
        var id: UInt64

        static func < (first: Deadline, second: Deadline) -> Bool {
            (first.deadline, first.id) < (second.deadline, second.id)
        }
    }

    private struct State {
        /// A binary min-heap of deadlines; some may belong to cancelled timers (no `work`).
        var heap: [Deadline] = []
        /// The work of every pending timer, by id.
        var work: [UInt64: @Sendable () async -> Void] = [:]
        var lastID: UInt64 = 0
        var running = false

        mutating func push(_ item: Deadline) {
            heap.append(item)
            var child = heap.count - 1
            while child > 0 {
                let parent = (child - 1) / 2
                guard heap[child] < heap[parent] else { break }
                heap.swapAt(child, parent)
                child = parent
            }
        }

        mutating func popFirst() {
            heap.swapAt(0, heap.count - 1)
            heap.removeLast()
            siftDown(from: 0)
        }

        mutating func siftDown(from start: Int) {
            var parent = start
            while true {
                let left = 2 * parent + 1
                guard left < heap.count else { return }
                let right = left + 1
                let least = right < heap.count && heap[right] < heap[left] ? right : left
                guard heap[least] < heap[parent] else { return }
                heap.swapAt(parent, least)
                parent = least
            }
        }

        /// Drops the deadlines of cancelled timers.
        mutating func dropCancelled() {
            heap.removeAll { work[$0.id] == nil }
            for index in stride(from: heap.count / 2 - 1, through: 0, by: -1) { siftDown(from: index) }
        }
    }

    private let state = Mutex(State())
    /// The monotonic instant deadlines count from.
    private let origin = ContinuousClock.now
    /// Signalled when a timer due before every other is added: the thread waits for it instead.
    private let wake = DispatchSemaphore(value: 0)

    /// Runs `fire` (on a task of its own) when the monotonic clock reaches `deadline`, unless cancelled first.
    func schedule(at deadline: ContinuousClock.Instant, _ fire: @escaping @Sendable () async -> Void) -> ScheduledTimer {
        let due = milliseconds(deadline)
        let (id, first, start) = state.withLock { state in
            state.lastID += 1
            let first = state.heap.first.map { due < $0.deadline } ?? true
            state.work[state.lastID] = fire
            state.push(Deadline(deadline: due, id: state.lastID))
            defer { state.running = true }
            return (state.lastID, first, !state.running)
        }
        if start, !OwnThread.tryStart({ self.run() }) {
            // No thread could be made: the next timer tries again, and this one waits on a task.
            state.withLock { $0.running = false }
            Task {
                try? await Task.sleep(until: deadline, clock: .continuous)
                if let work = self.take(id) { await work() }
            }
        } else if first {
            wake.signal()
        }
        return ScheduledTimer { self.cancel(id) }
    }

    /// Milliseconds of the monotonic clock from ``origin`` to `instant` (rounded up: never early).
    private func milliseconds(_ instant: ContinuousClock.Instant) -> Int64 {
        let components = (instant - origin).components
        return components.seconds * 1000 + (components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    }

    /// The pending timer `id`'s work, taken so it runs once (nil when it ran or was cancelled).
    private func take(_ id: UInt64) -> (@Sendable () async -> Void)? {
        state.withLock { $0.work.removeValue(forKey: id) }
    }

    private func cancel(_ id: UInt64) {
        state.withLock { state in
            guard state.work.removeValue(forKey: id) != nil else { return }
            if state.heap.count >= 64, state.heap.count > 2 * state.work.count { state.dropCancelled() }
        }
    }

    /// Fires what is due, then sleeps until the next deadline or a sooner timer is added.
    private func run() {
        while true {
            let now = milliseconds(ContinuousClock.now)
            let (due, next) = state.withLock { state -> ([@Sendable () async -> Void], Int64?) in
                var due: [@Sendable () async -> Void] = []
                while let first = state.heap.first, first.deadline <= now || state.work[first.id] == nil {
                    state.popFirst()
                    if let work = state.work.removeValue(forKey: first.id) { due.append(work) }
                }
                return (due, state.heap.first?.deadline)
            }
            for work in due { Task { await work() } }
            if let next {
                let delay = min(max(0, next - now), SystemClock.longestDelay.components.seconds * 1000)
                _ = wake.wait(timeout: .now() + .milliseconds(Int(delay)))
            } else {
                wake.wait()
            }
        }
    }
}
