/// The token store: compare-and-set saves, reconciling with what another instance saved, and the
/// stored tokens read for a configuration.
extension AccessEnabler {
    /// Saves with a compare-and-set against the version the machine's view came from.
    func save(_ tokens: StoredTokens, requestorID: String) async throws(TokenStorageError) {
        guard let known = storeVersion, known.requestorID == requestorID else {
            // Never read for this requestor: whatever is stored must be read before it is replaced.
            throw .conflict(current: try await storage.version(deviceID: environment.deviceID, requestorID: requestorID))
        }
        let version = try await storage.save(
            tokens, deviceID: environment.deviceID, requestorID: requestorID, replacing: known.version)
        storeVersion = (requestorID, version)
    }

    /// Before every input (and after a lost compare-and-set): when the stored version is not the
    /// one the machine's view came from, reads the tokens and, when they differ, feeds
    /// ``Input/storageChanged(_:)`` (another instance logged in or out, started or took a login).
    func reconcileWithStorage(force: Bool = false) async {
        guard case .configured(let configuration) = machine.configuration else { return }
        let requestorID = configuration.requestorID
        do throws(TokenStorageError) {
            if !force, let known = storeVersion, known.requestorID == requestorID {
                let version = try await storage.version(deviceID: environment.deviceID, requestorID: requestorID)
                guard version != known.version else { return }
            }
            let current = try await storage.load(deviceID: environment.deviceID, requestorID: requestorID)
            storeVersion = (requestorID, current.version)
            guard machine.differs(from: current.tokens) else { return }
            await process(.storageChanged(current.tokens), retryingConflicts: false)
        } catch {
            monitor?.observe(.storageFailed(error.description))
        }
    }

    /// A configuration answer: reads the stored tokens (and other requestors' logins on this
    /// device) for the machine, unless the answer is late.
    func configurationAnswered(
        _ operation: OperationID, requestorID: String, _ result: Result<BackendResponse, BackendError>
    ) async {
        switch result {
        case .success(.configuration(let answer)) where answer.requestorID == requestorID:
            let configuration = SharedConfigurations.share(RequestorConfiguration(answer))
            var stored = StoredTokens.empty
            var others: [AuthenticationToken] = []
            if case .configuring(_, let current, _) = machine.configuration, current == operation {
                do throws(TokenStorageError) {
                    let loaded = try await storage.load(deviceID: environment.deviceID, requestorID: requestorID)
                    stored = loaded.tokens
                    storeVersion = (requestorID, loaded.version)
                } catch {
                    storeVersion = nil
                    monitor?.observe(.storageFailed(error.description))
                }
                others = await othersStored(requestorID)
            }
            let verified = await verifyProviders(
                ProviderSession.of(deviceID: environment.deviceID, requestorID: requestorID, configuration: operation),
                accounts: stored.providerAccounts)
            await process(.configurationLoaded(operation, configuration, stored, others: others, verified: verified))
        case .success:
            await process(.configurationFailed(operation, .malformedResponse("not a configuration for '\(requestorID)'")))
        case .failure(let error):
            await process(.configurationFailed(operation, error))
        }
    }

    /// What other requestors stored on this device (for single sign-on); a storage that cannot say finds none.
    private func othersStored(_ requestorID: String) async -> [AuthenticationToken] {
        do throws(TokenStorageError) {
            return try await storage.authentications(deviceID: environment.deviceID).filter { $0.requestorID != requestorID }
        } catch {
            monitor?.observe(.storageFailed(error.description))
            return []
        }
    }
}
