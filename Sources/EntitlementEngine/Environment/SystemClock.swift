import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Wall-clock time for production; timers are Dispatch deadlines, not parked tasks.
public struct SystemClock: EngineClock {
    /// The longest delay handed to Dispatch, in milliseconds (100 years).
    static let longestDelay: Int64 = 100 * 365 * 86_400_000

    /// Creates the system clock.
    public init() {}

    /// The current wall-clock time.
    public func now() -> Timestamp { Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }

    /// Schedules `fire` on a global queue at `deadline`; cancelling before then stops it.
    public func schedule(at deadline: Timestamp, _ fire: @escaping @Sendable () async -> Void) -> ScheduledTimer {
        // Dispatch counts nanoseconds: a deadline beyond a century is as good as never.
        let delay = min(max(0, deadline.milliseconds(since: now())), Self.longestDelay)
        let flag = CancellationFlag()
        DispatchQueue.global().asyncAfter(wallDeadline: .now() + .milliseconds(Int(delay))) {
            guard !flag.isCancelled else { return }
            Task { await fire() }
        }
        return ScheduledTimer { flag.cancel() }
    }
}

/// A thread-safe one-way flag.
private final class CancellationFlag: Sendable {
    private let state = Mutex(false)
    var isCancelled: Bool { state.withLock { $0 } }
    func cancel() { state.withLock { $0 = true } }
}
