/// The token store: compare-and-set saves, reconciling with what another instance saved, and the
/// stored tokens read for a configuration.
extension AccessEnabler {
    /// Saves with a compare-and-set against the version the machine's view came from.
    func save(_ tokens: StoredTokens, requestorID: String) async throws(TokenStorageError) {
        guard let known = state.storeVersion, known.requestorID == requestorID else {
            // Never read for this requestor: whatever is stored must be read before it is replaced.
            throw .conflict(current: try await storedVersion(requestorID))
        }
        let storage = self.storage, deviceID = environment.deviceID
        let version = try await spanned("save", requestorID) { () async throws(TokenStorageError) -> StorageVersion in
            try await storage.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: known.version)
        }
        state.storeVersion = (requestorID, version)
    }

    /// Whether the stored tokens are known, without waiting for the store, to be those the machine
    /// last read: the store answers their version at once and it is the one last read (or the machine
    /// is not configured, and nothing would be read).
    func storageUnchangedAtHand() -> Bool {
        guard let followed = state.followedRequestorID else { return true }
        guard !state.viewHeldBack, let known = state.storeVersion, known.requestorID == followed,
            let atHand = storage.knownVersion(deviceID: environment.deviceID, requestorID: known.requestorID)
        else { return false }
        return atHand == known.version
    }

    /// Before every input (and after a lost compare-and-set): when the stored version is not the
    /// one the machine's view came from, or the machine kept a view of its own the last time
    /// (``viewHeldBack``), reads the tokens and, when they differ, feeds `Input.storageChanged(_:)`
    /// (another instance logged in or out, started or took a login). A read that fails for a passing
    /// reason is tried again after a pause, as a save is, within ``EngineSettings/storageRetryWindow``;
    /// returns the failure when the store could still not be read (the view may be older than the store's).
    @discardableResult
    func reconcileWithStorage(force: Bool = false) async -> TokenStorageError? {
        guard let requestorID = state.followedRequestorID else { return nil }
        var retry: StorageRetry?  // made at the first failure: reading the clock is no cost of every input
        while true {
            let current: VersionedTokens
            do throws(TokenStorageError) {
                if !force, !state.viewHeldBack, let known = state.storeVersion, known.requestorID == requestorID {
                    // A version the store knows at once spares the actor a hop off and back for every input.
                    let version: StorageVersion
                    if let atHand = storage.knownVersion(deviceID: environment.deviceID, requestorID: requestorID) {
                        version = atHand
                    } else {
                        version = try await storedVersion(requestorID)
                    }
                    guard version != known.version else { return nil }
                }
                current = try await storedTokens(requestorID)
            } catch {
                var pauses = retry ?? StorageRetry(window: state.machine.settings.storageRetryWindow)
                guard error.isTransient, pauses.mayPause else {
                    monitor?.observe(.storageFailed(error.description))
                    return error
                }
                let pause = pauses.nextPause()
                retry = pauses
                monitor?.observe(.storageFailed("\(error.description) (reading again in \(pause))"))
                await Self.pause(for: pause)
                continue
            }
            state.storeVersion = (requestorID, current.version)
            guard state.machine.differs(from: current.tokens) else {
                state.viewHeldBack = false
                return nil
            }
            await process(.storageChanged(current.tokens), onLostSave: .drop)
            // A machine in the middle of a flow of its own keeps its view until the flow ends: follow the
            // store again before the next input, or it would act on a view older than the store's for good.
            state.viewHeldBack = state.machine.differs(from: current.tokens)
            return nil
        }
    }

    /// A configuration answer: reads the stored tokens (and other requestors' logins on this
    /// device) for the machine, unless the answer is late. A configuration whose save loses to another
    /// writer (another node saved between the read and the save) is read and decided again, up to
    /// ``conflictRetries`` times; the last attempt's lost save counts as failed (the step is taken in
    /// memory and the next input reads the store). The chain's providers are the machine's to ask.
    func configurationAnswered(
        _ operation: OperationID, requestorID: String, _ result: Result<BackendResponse, BackendError>
    ) async {
        switch result {
        case .success(.configuration(let answer)) where answer.requestorID == requestorID:
            let configuration = SharedConfigurations.share(RequestorConfiguration(answer))
            for attempt in 0...Self.conflictRetries {
                var stored = StoredTokens.empty
                var others: [AuthenticationToken] = []
                if state.configurationLoading == operation {
                    do throws(TokenStorageError) {
                        let loaded = try await storedTokens(requestorID)
                        stored = loaded.tokens
                        state.storeVersion = (requestorID, loaded.version)
                    } catch {
                        state.storeVersion = nil
                        monitor?.observe(.storageFailed(error.description))
                    }
                    others = await othersStored(requestorID)
                }
                let loaded = Input.configurationLoaded(operation, configuration, stored, others: others)
                let outcome = await process(loaded, onLostSave: attempt < Self.conflictRetries ? .drop : .fail)
                guard outcome == .lostToAnotherWriter else {
                    if state.configurationLoading == operation { state.configurationLoading = nil }
                    return
                }
            }
        case .success:
            await process(.configurationFailed(operation, .malformedResponse("not a configuration for '\(requestorID)'")))
        case .failure(let error):
            await process(.configurationFailed(operation, error))
        }
    }

    /// What other requestors stored on this device (for single sign-on); a storage that cannot say finds none.
    private func othersStored(_ requestorID: String) async -> [AuthenticationToken] {
        do throws(TokenStorageError) {
            let storage = self.storage, deviceID = environment.deviceID
            return try await spanned("authentications", requestorID) { () async throws(TokenStorageError) -> [AuthenticationToken] in
                try await storage.authentications(deviceID: deviceID)
            }.filter { $0.requestorID != requestorID }
        } catch {
            monitor?.observe(.storageFailed(error.description))
            return []
        }
    }

    /// The stored tokens for `requestorID` on this device, with their version.
    private func storedTokens(_ requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        let storage = self.storage, deviceID = environment.deviceID
        return try await spanned("load", requestorID) { () async throws(TokenStorageError) -> VersionedTokens in
            try await storage.load(deviceID: deviceID, requestorID: requestorID)
        }
    }

    /// The stored version for `requestorID` on this device.
    private func storedVersion(_ requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        let storage = self.storage, deviceID = environment.deviceID
        return try await spanned("version", requestorID) { () async throws(TokenStorageError) -> StorageVersion in
            try await storage.version(deviceID: deviceID, requestorID: requestorID)
        }
    }

    /// `body` in a span `entitle.storage.NAME` when the monitor has a tracer.
    private func spanned<T>(
        _ name: String, _ requestorID: String, _ body: () async throws(TokenStorageError) -> T
    ) async throws(TokenStorageError) -> T {
        guard let tracer = monitor?.tracer else { return try await body() }
        return try await tracer.spanning("entitle.storage.\(name)", spanAttributes(requestorID), outcome: { $0.code.description }, body)
    }

    /// The attributes every span of this engine carries: the device by its pseudonym, the requestor.
    func spanAttributes(_ requestorID: String) -> [String: String] {
        ["entitle.device": DevicePseudonym.of(environment.deviceID), "entitle.requestor": requestorID]
    }
}
