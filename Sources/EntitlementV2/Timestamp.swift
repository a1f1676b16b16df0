/// A point in time as integer milliseconds since 1970-01-01T00:00:00Z, read from the injected clock.
///
/// Arithmetic on times saturates: moving a timestamp by any duration, or measuring between any two
/// timestamps, never traps — it stops at `Int64.min` / `Int64.max` ("the beginning" and "never").
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch.
    public var milliseconds: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// This instant moved by `duration`, saturating at the ends of time.
    public func adding(_ duration: Duration) -> Timestamp {
        Timestamp(milliseconds: Saturating.add(milliseconds, duration.milliseconds))
    }

    /// Milliseconds from `earlier` to this instant (negative when `earlier` is later), saturating.
    public func milliseconds(since earlier: Timestamp) -> Int64 { Saturating.subtract(milliseconds, earlier.milliseconds) }

    /// Orders timestamps by time.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// `t=<milliseconds>`.
    public var description: String { "t=\(milliseconds)" }
}

extension Duration {
    /// This duration in whole milliseconds (rounded toward zero), saturating at `Int64.min` / `Int64.max`.
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return Saturating.add(Saturating.multiply(seconds, 1000), attoseconds / 1_000_000_000_000_000)
    }

    /// This duration in whole nanoseconds (rounded toward zero), saturating at `Int64.min` / `Int64.max`
    /// (a timer's reading).
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return Saturating.add(Saturating.multiply(seconds, 1_000_000_000), attoseconds / 1_000_000_000)
    }
}

/// Integer arithmetic that stops at the bounds instead of trapping (times, durations, deadlines).
package enum Saturating {
    /// `a + b`, clamped to `Int64`'s range.
    package static func add(_ a: Int64, _ b: Int64) -> Int64 {
        let (sum, overflow) = a.addingReportingOverflow(b)
        return overflow ? (b > 0 ? .max : .min) : sum
    }

    /// `a - b`, clamped to `Int64`'s range.
    package static func subtract(_ a: Int64, _ b: Int64) -> Int64 {
        let (difference, overflow) = a.subtractingReportingOverflow(b)
        return overflow ? (b < 0 ? .max : .min) : difference
    }

    /// `a × b`, clamped to `Int64`'s range.
    package static func multiply(_ a: Int64, _ b: Int64) -> Int64 {
        let (product, overflow) = a.multipliedReportingOverflow(by: b)
        return overflow ? ((a < 0) == (b < 0) ? .max : .min) : product
    }
}
