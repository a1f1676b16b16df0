import Dispatch
import Synchronization

#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Wall-clock time for production; timers are Dispatch timer sources, not parked tasks.
public struct SystemClock: EngineClock {
    /// The longest delay handed to Dispatch, in milliseconds (100 years).
    static let longestDelay: Int64 = 100 * 365 * 86_400_000

    /// Creates the system clock.
    public init() {}

    /// The current wall-clock time.
    public func now() -> Timestamp { Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down))) }

    /// Schedules `fire` at `deadline` on a one-shot Dispatch timer source. Cancelling cancels the
    /// source, which lets go of `fire` (and what it holds) at once — a cancelled timer does not stay
    /// queued until its deadline.
    public func schedule(at deadline: Timestamp, _ fire: @escaping @Sendable () async -> Void) -> ScheduledTimer {
        // Dispatch counts nanoseconds: a deadline beyond a century is as good as never.
        let delay = min(max(0, deadline.milliseconds(since: now())), Self.longestDelay)
        let source = DispatchSource.makeTimerSource(queue: .global())
        let timer = OneShotTimer(source)
        source.setEventHandler {
            guard timer.take() else { return }
            Task { await fire() }
        }
        source.schedule(wallDeadline: .now() + .milliseconds(Int(delay)))
        source.resume()
        return ScheduledTimer { timer.cancel() }
    }
}

/// A Dispatch timer source that fires once or is cancelled, whichever comes first; either way the
/// source is cancelled, so its handler is released. `@unchecked Sendable`: the source is set once and
/// Dispatch's sources are thread-safe; whether it is done is kept behind a lock.
private final class OneShotTimer: @unchecked Sendable {
    private let source: any DispatchSourceTimer
    private let done = Mutex(false)

    init(_ source: any DispatchSourceTimer) { self.source = source }

    /// True once, for the first of firing and cancelling: the caller may fire.
    func take() -> Bool {
        let first = done.withLock { done in
            defer { done = true }
            return !done
        }
        if first { source.cancel() }
        return first
    }

    func cancel() { _ = take() }
}
