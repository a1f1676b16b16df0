/// What ``SessionHost/shutdown(gracePeriod:)`` found.
public struct SessionShutdownReport: Sendable, Hashable {
    /// Sessions that came to rest (every call they accepted answered) before the grace period ended.
    public var settled = 0
    /// Sessions still busy when the grace period ended: a login waiting for its redirect (kept in the
    /// token storage, so another node finishes it) or a request past its deadline.
    public var stillBusy = 0

    /// Creates a report.
    public init(settled: Int = 0, stillBusy: Int = 0) {
        self.settled = settled
        self.stillBusy = stillBusy
    }
}
