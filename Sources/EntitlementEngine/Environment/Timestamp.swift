/// A point in time as integer milliseconds since 1970-01-01T00:00:00Z, read from the injected clock.
public struct Timestamp: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// Milliseconds since the Unix epoch.
    public var milliseconds: Int64

    /// Creates a timestamp from milliseconds since the Unix epoch.
    public init(milliseconds: Int64) { self.milliseconds = milliseconds }

    /// This instant moved by `duration`.
    public func adding(_ duration: Duration) -> Timestamp { Timestamp(milliseconds: milliseconds + duration.milliseconds) }

    /// Orders timestamps by time.
    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool { lhs.milliseconds < rhs.milliseconds }

    /// `t=<milliseconds>`.
    public var description: String { "t=\(milliseconds)" }
}

extension Duration {
    /// This duration in whole milliseconds (rounded toward zero).
    public var milliseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }
}
