/// What a model checker hashes to know it has seen a machine before: everything the machine decides by,
/// and nothing it only caches or reports.
extension EntitlementMachine {
    /// Feeds every field that can change what the machine does next into `hasher`: the regions, the
    /// requests, queues and caches, what it last saved, its counters. Left out: the rows the last input
    /// took, the tracking-GUID cache and the time of the last input (a checker hashes its own clock).
    /// Two machines with equal fingerprints (but for a collision) answer every input alike.
    package func fingerprint(into hasher: inout Hasher) {
        Self.fingerprint(held.value, savedFieldsWritten: savedFieldsWritten, into: &hasher)
    }

    /// The fields of ``Held`` the fingerprint hashes (the chain's box for its views, accounts, work and
    /// recent renewals). A test holds this list and ``heldFieldsNotFingerprinted`` to `Held`'s fields, so a
    /// field added there is named here — and hashed below — or the check could take two different
    /// machines for one.
    package static let fingerprintedHeldFields: Set<String> = [
        "regions", "authorizations", "queue", "authorizationExpiries", "preauthorizationCache", "selectedProviderID", "options",
        "chainBox", "preauthorizations", "requestsSent", "persistedBox", "persistedBeforeSave", "persistedLeftOut", "nextCacheSweep",
        "expiredFlowStateBox", "foreignStoreBox", "configurationOperation", "configurationFailures", "backendPausedUntil", "lastFlow",
        "lastOperation", "stepUps", "stepUpCalls", "logoutMark",
    ]
    /// The fields of ``Held`` the fingerprint leaves out: fixed when the machine is made, alike on every
    /// node of a check.
    package static let heldFieldsNotFingerprinted: Set<String> = ["sharedSettings", "deviceID"]
    /// The names of this machine's ``Held`` fields.
    package var heldFieldNames: Set<String> { Set(Mirror(reflecting: held.value).children.compactMap(\.label)) }

    /// Hashes the fields `held` in place (a copy would retain each of them).
    private static func fingerprint(_ held: borrowing Held, savedFieldsWritten: Bool, into hasher: inout Hasher) {
        switch held.regions.configuration {
        case .configured(let configuration):
            // The configuration is the same value on every node of a check: its requestor names it.
            hasher.combine(0 as UInt8)
            hasher.combine(configuration.requestorID)
        case let other:
            hasher.combine(1 as UInt8)
            hasher.combine(other)
        }
        hasher.combine(held.regions.authentication)
        hasher.combine(held.authorizations)
        hasher.combine(held.queue)
        hasher.combine(held.authorizationExpiries)
        hasher.combine(held.preauthorizationCache)
        hasher.combine(held.selectedProviderID)
        hasher.combine(held.options)
        hasher.combine(held.chainBox?.value.views)
        hasher.combine(held.chainBox?.value.accounts)
        hasher.combine(held.chainBox?.value.work)
        hasher.combine(held.chainBox?.value.renewedRecently)
        hasher.combine(held.chainBox?.value.setRequestorWait)
        hasher.combine(held.preauthorizations)
        hasher.combine(held.requestsSent.count)
        for operation in held.requestsSent.keys.sorted() {
            let sent = held.requestsSent[operation]!
            hasher.combine(operation)
            hasher.combine(sent.request)
            hasher.combine(sent.attempt)
        }
        combine(held.persistedBox, into: &hasher)
        combine(held.persistedBeforeSave, into: &hasher)
        hasher.combine(held.persistedLeftOut)
        hasher.combine(held.nextCacheSweep)
        hasher.combine(held.expiredFlowStateBox?.value)
        combine(held.foreignStoreBox, into: &hasher)
        hasher.combine(held.configurationOperation)
        hasher.combine(held.configurationFailures)
        hasher.combine(held.backendPausedUntil)
        hasher.combine(held.lastFlow)
        hasher.combine(held.lastOperation)
        hasher.combine(held.stepUps)
        hasher.combine(held.stepUpCalls)
        hasher.combine(held.logoutMark)
        hasher.combine(savedFieldsWritten)
    }

    /// Hashes a boxed value in place (nil apart from every value).
    private static func combine<Value: Hashable>(_ box: Boxed<Value>?, into hasher: inout Hasher) {
        guard let box else { return hasher.combine(0 as UInt8) }
        hasher.combine(1 as UInt8)
        box.value.hash(into: &hasher)
    }
}
