/// The injected clock: the only way the engine learns the time or waits for it.
///
/// A timer is a deadline held by the clock, not a parked task: `ManualClock` fires timers when a
/// test advances it, ``SystemClock`` hands them to one timer thread.
public protocol EngineClock: Sendable {
    /// The current time.
    func now() -> Timestamp
    /// Calls `fire` once at or after `deadline`, unless the returned timer is cancelled first.
    func schedule(at deadline: Timestamp, _ fire: @escaping @Sendable () async -> Void) -> ScheduledTimer
}

/// A timer handed out by an ``EngineClock``; cancelling it is idempotent.
public final class ScheduledTimer: Sendable {
    private let onCancel: @Sendable () -> Void

    /// Creates a timer handle that runs `onCancel` when cancelled.
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = onCancel }

    /// Stops the timer from firing. Has no effect after it fired or was cancelled.
    public func cancel() { onCancel() }
}
