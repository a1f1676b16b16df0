#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Wall-clock time for production; timers are deadlines one thread of the process fires
/// (`TimerThread`), not parked tasks or a Dispatch source each.
public struct SystemClock: EngineClock {
    /// The longest delay waited for at once, in milliseconds (100 years).
    static let longestDelay: Int64 = 100 * 365 * 86_400_000

    /// Creates the system clock.
    public init() {}

    /// The current wall-clock time.
    public func now() -> Timestamp { Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }

    /// Runs `fire` at `deadline` on a task of its own. Cancelling lets go of `fire` (and what it holds)
    /// at once — a cancelled timer does not stay queued until its deadline.
    public func schedule(at deadline: Timestamp, _ fire: @escaping @Sendable () async -> Void) -> ScheduledTimer {
        TimerThread.shared.schedule(at: deadline, fire)
    }
}
