/// What ``SessionHost/shutdown(gracePeriod:)`` found.
public struct SessionShutdownReport: Sendable, Hashable {
    /// Sessions that came to rest (every call they accepted answered) before the grace period ended.
    public var settled = 0
    /// Sessions still busy when the grace period ended (a login waiting for its redirect, a request
    /// past its deadline): closed then, their waiting calls answered `status(SESSION_CLOSED)`. A login
    /// or logout they were waiting for stays in the token storage, for whichever node its redirect reaches.
    public var stillBusy = 0
    /// The calls those busy sessions had not answered, answered `SESSION_CLOSED` when they were closed.
    public var callsClosed = 0

    /// Creates a report.
    public init(settled: Int = 0, stillBusy: Int = 0, callsClosed: Int = 0) {
        self.settled = settled
        self.stillBusy = stillBusy
        self.callsClosed = callsClosed
    }
}
