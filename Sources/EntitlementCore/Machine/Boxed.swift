import Synchronization

/// A value behind one reference: a machine keeps rarely used or widely shared parts this way, so the
/// machine itself (copied on every input, kept per resting session) stays small.
final class Boxed<Value: Sendable>: Sendable {
    let value: Value

    init(_ value: Value) { self.value = value }
}

extension Boxed where Value == EngineSettings {
    /// The most distinct settings kept for sharing (the table starts over past it).
    static let sharedLimit = 64

    private static let table = Mutex<[EngineSettings: Boxed<EngineSettings>]>([:])

    /// One box per distinct settings in the process: a host's many machines share one.
    static func shared(_ settings: EngineSettings) -> Boxed<EngineSettings> {
        table.withLock { table in
            if let kept = table[settings] { return kept }
            if table.count >= sharedLimit { table.removeAll() }
            let box = Boxed(settings)
            table[settings] = box
            return box
        }
    }
}
