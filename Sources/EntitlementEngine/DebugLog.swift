/// The engine's debug log: one line per boundary event (calls, callbacks with the calls they
/// answer, backend traffic, late results ignored, joins), secrets shortened.
///
/// ```swift
/// let enabler = AccessEnabler(backend: backend, environment: .live(deviceID: id), monitor: DebugLog())
/// ```
public struct DebugLog: EngineMonitor {
    private let write: @Sendable (String) -> Void

    /// Creates a log that hands each line to `write` (default: standard output).
    public init(write: @escaping @Sendable (String) -> Void = { print($0) }) { self.write = write }

    /// Writes the event's redacted line.
    public func observe(_ event: EngineEvent) { write(event.redactedDescription) }
}

/// Several monitors observing one engine, each event in the given order.
package struct MonitorGroup: EngineMonitor {
    /// The monitors, in the order they observe.
    package let members: [any EngineMonitor]

    /// Groups `members`.
    package init(_ members: [any EngineMonitor]) { self.members = members }

    /// Passes the event to every member.
    package func observe(_ event: EngineEvent) {
        for member in members { member.observe(event) }
    }

    /// The first member's tracer.
    package var tracer: (any EngineTracer)? { members.lazy.compactMap(\.tracer).first }

    /// Passes the mailbox's reading to every member.
    package func observe(mailboxWait wait: Duration, behind: Int) {
        for member in members { member.observe(mailboxWait: wait, behind: behind) }
    }
}
