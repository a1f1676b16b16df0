#if canImport(FoundationEssentials)
    import FoundationEssentials
#else
    import Foundation
#endif

/// Production time: the wall clock as read when the process started, advanced by the monotonic clock
/// (`ContinuousClock`). Every deadline and timer is therefore a monotonic wait — an NTP step, a manual
/// `date -s` or a VM's clock jump moves none of them — and the times the engine compares with Adobe's
/// timestamps are the wall clock's as long as nobody steps it. ``wallClockStep`` says how far the wall
/// clock has been stepped since (a node whose clock was stepped by more than a few seconds should be
/// restarted at a quiet moment to follow it; start nodes after their clock is synchronized). Timers
/// are deadlines one thread of the process fires (`TimerThread`), not parked tasks or a Dispatch
/// source each.
public struct SystemClock: EngineClock {
    /// The wall clock and the monotonic clock, read together: the engine's time is `wall` plus the
    /// monotonic time elapsed since `instant`; `readWallClock` reads the wall clock again (for
    /// ``wallClockStep``). Shared by reference: a clock is one word in every engine's environment.
    final class Anchor: Sendable {
        let wall: Timestamp
        let instant: ContinuousClock.Instant
        let readWallClock: @Sendable () -> Timestamp

        init(_ readWallClock: @escaping @Sendable () -> Timestamp) {
            self.wall = readWallClock()
            self.instant = ContinuousClock.now
            self.readWallClock = readWallClock
        }
    }

    /// The process's anchor, read once: every `SystemClock()` agrees on the time.
    private static let processAnchor = Anchor(wallClockNow)

    /// The longest delay waited for at once (100 years).
    static let longestDelay = Duration.seconds(100 * 365 * 86_400)

    private let anchor: Anchor

    /// Creates the system clock (anchored once per process).
    public init() { anchor = Self.processAnchor }

    /// A clock anchored now on `wallClock` (a test's wall clock that it steps).
    package init(wallClock: @escaping @Sendable () -> Timestamp) { anchor = Anchor(wallClock) }

    /// The engine's time: the anchor's wall-clock time plus the monotonic time since (milliseconds).
    public func now() -> Timestamp {
        let elapsed = (ContinuousClock.now - anchor.instant).components
        return anchor.wall.adding(.milliseconds(elapsed.seconds * 1000 + elapsed.attoseconds / 1_000_000_000_000_000))
    }

    /// Runs `fire` when the monotonic clock reaches `deadline` (engine time) on a task of its own.
    /// Cancelling lets go of `fire` (and what it holds) at once — a cancelled timer does not stay
    /// queued until its deadline.
    public func schedule(at deadline: Timestamp, _ fire: @escaping @Sendable () async -> Void) -> ScheduledTimer {
        TimerThread.shared.schedule(at: instant(of: deadline), fire)
    }

    /// How far the wall clock is from the engine's time now (positive: the wall clock was stepped
    /// forward since the process started). Near zero unless someone stepped it.
    public var wallClockStep: Duration { .milliseconds(Saturating.subtract(anchor.readWallClock().milliseconds, now().milliseconds)) }

    /// The monotonic instant of an engine time (a far one is bounded by ``longestDelay``).
    func instant(of deadline: Timestamp) -> ContinuousClock.Instant {
        let fromAnchor = Saturating.subtract(deadline.milliseconds, anchor.wall.milliseconds)
        let bound = Self.longestDelay.components.seconds * 1000
        return anchor.instant + .milliseconds(min(max(fromAnchor, -bound), bound))
    }

    private static func wallClockNow() -> Timestamp {
        Timestamp(milliseconds: Int64((Date().timeIntervalSince1970 * 1000).rounded(.down)))
    }
}
