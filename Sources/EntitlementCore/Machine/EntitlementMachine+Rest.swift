import EntitlementSupport

/// The machine at rest: as small as it can be while a session is idle, and whole again on its next input.
extension EntitlementMachine {
    /// This machine as it rests, as small as it can be: what only the last input needed (its recorded
    /// rows, the undo of a save that has completed) is dropped, and so is what ``resumed()`` rebuilds exactly — the tracking GUID cache, and the
    /// saved-token snapshot when it is what the state itself would save (as it is after every completed save).
    package func resting() -> EntitlementMachine {
        var rest = self
        rest.forgetTransitions()
        rest.rowInput = .anyInput
        rest.lastTrackingGUID = nil
        if rest.persistedBeforeSave != nil { rest.persistedBeforeSave = nil }  // at rest the last save has completed: nothing can take it back
        rest.releaseEmptiedStorage()
        if persistedBox != nil, persisted == storedTokens {
            rest.persistedBox = nil
            rest.persistedLeftOut = true
        }
        return rest
    }

    /// The requestor whose stored tokens a resumed engine's shell follows: the one the steps that led
    /// here last told (`MachineStep.storeFollowing`), read once when the engine is made from a rest.
    package var followedRequestorID: String? { configuration.configuredRequestorID }

    /// Lets go of the storage emptied collections keep: a removal keeps a collection's buffer (and a
    /// removal from a shared one copies it, capacity and all), so an empty one can hold hundreds of
    /// bytes — `requestsSent` alone held about 300 a session. Nothing the machine does changes.
    package mutating func releaseEmptiedStorage() {
        // Each field is written only when it keeps storage: a write to a machine that shares its fields
        // with another copies them (``Held``).
        if requestsSent.isEmpty, requestsSent.capacity > 0 { requestsSent = [:] }
        if authorizations.isEmpty, authorizations.capacity > 0 { authorizations = [] }
        if queue.isEmpty, queue.capacity > 0 { queue = [] }
        if preauthorizations.isEmpty, preauthorizations.capacity > 0 { preauthorizations = [] }
        if authorizationExpiries.isEmpty, authorizationExpiries.capacity > 0 { authorizationExpiries = [:] }
        if preauthorizationCache.isEmpty, preauthorizationCache.capacity > 0 { preauthorizationCache = [:] }
        if options.isEmpty, options.capacity > 0 { options = [:] }
    }

    /// A machine made by ``resting()``, whole again: equal in every behaviour to the one that rested.
    package func resumed() -> EntitlementMachine {
        guard persistedLeftOut else { return self }
        var machine = self
        machine.persisted = storedTokens
        machine.persistedLeftOut = false
        return machine
    }
}
