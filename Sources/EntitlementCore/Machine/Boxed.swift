import Synchronization

/// A value behind one reference: a machine keeps rarely used or widely shared parts this way, so the
/// machine itself (copied on every input, kept per resting session) stays small.
package final class Boxed<Value: Sendable>: Sendable {
    package let value: Value

    package init(_ value: Value) { self.value = value }
}

/// Equal settings in one box: the owner of many machines (a host) keeps one of these, so its machines
/// share one copy of their settings. Nothing process-wide: each owner's table is its own.
package final class SharedSettings: Sendable {
    /// The most distinct settings kept for sharing (the table starts over past it).
    static let limit = 64

    private let table = Mutex<[EngineSettings: Boxed<EngineSettings>]>([:])

    package init() {}

    /// The box holding `settings`, shared with every earlier caller that asked for equal settings.
    package func box(_ settings: EngineSettings) -> Boxed<EngineSettings> {
        table.withLock { table in
            if let kept = table[settings] { return kept }
            if table.count >= Self.limit { table.removeAll() }
            let box = Boxed(settings)
            table[settings] = box
            return box
        }
    }
}
