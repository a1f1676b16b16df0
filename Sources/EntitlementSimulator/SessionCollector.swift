import Synchronization

/// Collects every ``SimulatedSession`` created while it is the task-local ``current`` one, so a
/// test harness can check each session's ``CallLedger`` after the test, even if the test forgot to.
package final class SessionCollector: Sendable {
    /// The collector sessions created in this task register with, if any.
    @TaskLocal package static var current: SessionCollector?

    private let sessions = Mutex<[SimulatedSession]>([])

    /// Creates an empty collector.
    package init() {}

    /// Registers a session.
    func add(_ session: SimulatedSession) { sessions.withLock { $0.append(session) } }

    /// The sessions created so far, in order.
    package var collected: [SimulatedSession] { sessions.withLock { $0 } }
}
