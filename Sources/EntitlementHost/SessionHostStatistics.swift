/// What a ``SessionHost`` holds and has done, at one moment.
public struct SessionHostStatistics: Sendable, Hashable {
    /// Engines in memory.
    public var resident = 0
    /// Sessions resting as values (out of memory as engines; back on their next call).
    public var resting = 0
    /// Sessions created since the host started.
    public var created = 0
    /// Times an engine was put to rest (idle or over the resident limit).
    public var evicted = 0
    /// Times a resting session came back for a call.
    public var resumed = 0
    /// Sessions closed.
    public var closed = 0
    /// Calls refused (mailbox full, session closing, host shutting down).
    public var refused = 0
    /// Resting sessions forgotten because they held nothing (``SessionHostSettings/forgetEmptySessionsAfter``).
    public var forgotten = 0

    /// Creates statistics (all zero by default).
    public init() {}
}
