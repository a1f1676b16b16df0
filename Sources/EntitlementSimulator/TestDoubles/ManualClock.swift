import EntitlementEngine
import Synchronization

/// A clock that moves only when told to: tests, scenarios, the demo and replays use it.
///
/// Timers fire during ``advance(by:)`` in deadline order (first scheduled first on equal
/// deadlines), and `advance` returns only after every fired timer's work has finished.
public final class ManualClock: EngineClock {
    private struct Pending {
        let id: UInt64
        let deadline: Timestamp
        let fire: @Sendable () async -> Void
    }

    private struct State {
        var now: Timestamp
        var nextID: UInt64 = 0
        var pending: [Pending] = []
    }

    private let state: Mutex<State>

    /// Creates a clock reading `start` (default 2026-01-01T00:00:00Z).
    public init(start: Timestamp = Timestamp(milliseconds: 1_767_225_600_000)) { state = Mutex(State(now: start)) }

    /// The current time.
    public func now() -> Timestamp { state.withLock { $0.now } }

    /// Registers a timer that fires when the clock is advanced to or past `deadline`.
    public func schedule(at deadline: Timestamp, _ fire: @escaping @Sendable () async -> Void) -> ScheduledTimer {
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.pending.append(Pending(id: state.nextID, deadline: deadline, fire: fire))
            return state.nextID
        }
        return ScheduledTimer { [weak self] in self?.state.withLock { $0.pending.removeAll { $0.id == id } } }
    }

    /// The number of timers waiting to fire.
    public var pendingTimerCount: Int { state.withLock { $0.pending.count } }

    /// Moves time forward by `duration`, firing every timer that falls due, in order.
    public func advance(by duration: Duration) async {
        let target = state.withLock { state -> Timestamp in
            state.now = state.now.adding(duration)
            return state.now
        }
        while let next = takeNextDue(at: target) { await next.fire() }
    }

    private func takeNextDue(at target: Timestamp) -> Pending? {
        state.withLock { state in
            let due = state.pending.enumerated().filter { $0.element.deadline <= target }
            guard let first = due.min(by: { ($0.element.deadline, $0.element.id) < ($1.element.deadline, $1.element.id) })
            else { return nil }
            state.pending.remove(at: first.offset)
            return first.element
        }
    }
}
