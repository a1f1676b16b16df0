/// An engine at rest, as a plain value: everything ``AccessEnabler/init(resuming:backend:delegate:storage:monitor:platform:providers:)``
/// needs to carry on exactly where ``AccessEnabler/rest()`` left off — the machine, the call-id
/// counter, the stored version its view came from and the environment (so randomness continues).
///
/// A session host keeps idle sessions in this form: no actor, no tasks, no timers, one reference.
/// What a delegate, a monitor or a trace sees from a resumed engine is what it would have seen had the
/// engine stayed in memory.
public struct EngineRest: Sendable {
    /// The parts, behind one reference so a registry of many rests stays small.
    final class Parts: Sendable {
        let machine: EntitlementMachine
        let lastCallID: UInt64
        let storeVersion: (requestorID: String, version: StorageVersion)?
        let environment: EngineEnvironment

        init(
            machine: EntitlementMachine, lastCallID: UInt64, storeVersion: (requestorID: String, version: StorageVersion)?,
            environment: EngineEnvironment
        ) {
            self.machine = machine
            self.lastCallID = lastCallID
            self.storeVersion = storeVersion
            self.environment = environment
        }
    }

    let parts: Parts

    /// The device the engine runs for.
    package var deviceID: String { parts.environment.deviceID }
    /// Whether the engine rested with a provider picker open: calls (the login's, and authorizations
    /// waiting for it) wait for the user's choice. An owner that drops such a rest must bring the engine
    /// back and cancel the choice (`setSelectedProvider(nil)`) first, or those calls are never answered.
    package var isChoosingProvider: Bool { parts.machine.loginChoosingProvider != nil }

    /// Whether the engine holds nothing worth keeping: nothing it would store (no login, pending login or
    /// logout, chosen provider or provider account; a logout mark the store keeps does not count) and no
    /// call waiting. Forgetting such a rest loses only its call-id counter and what providers verified
    /// (asked again at the next `setRequestor`).
    package var holdsNothing: Bool {
        !isChoosingProvider && parts.machine.holdsNothingButALogoutMark
    }

    /// The machine as it rests (for tests and inspection).
    package var machine: EntitlementMachine { parts.machine.resumed() }
}
