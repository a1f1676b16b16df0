/// What the machine keeps in token storage: built when a save needs it, compared part by part when a step
/// asks whether it must save.
extension EntitlementMachine {
    /// What should be in token storage now (``StoredTokens/empty`` when there is nothing to keep).
    package var storedTokens: StoredTokens {
        let stored = StoredAuthentication(authentication)
        guard !holdsNothing(stored) else { return .empty }
        return StoredTokens(
            authentication: stored.authentication, selectedProvider: selectedProviderID,
            deviceID: deviceID, pendingLogin: stored.pendingLogin, pendingLogout: stored.pendingLogout, providerAccounts: providerAccounts,
            pendingRegistration: stored.pendingRegistration, pendingStepUps: stepUps)
    }

    /// Whether there is nothing to keep: no authentication, flow, provider choice or account.
    private func holdsNothing(_ stored: StoredAuthentication) -> Bool {
        stored.authentication == nil && selectedProviderID == nil && stored.pendingLogin == nil && stored.pendingLogout == nil
            && providerAccounts.isEmpty && stored.pendingRegistration == nil && stepUps.isEmpty
    }

    /// Whether ``storedTokens`` differs from `tokens`, compared part by part without building it (every
    /// step that writes a stored field asks).
    func storedTokensDiffer(from tokens: StoredTokens) -> Bool {
        let stored = StoredAuthentication(authentication)
        if holdsNothing(stored) { return !(tokens.holdsNothing && tokens.deviceID == nil) }  // ``StoredTokens/empty``
        return tokens.deviceID != deviceID || tokens.selectedProvider != selectedProviderID || tokens.authentication != stored.authentication
            || tokens.pendingLogin != stored.pendingLogin || tokens.pendingLogout != stored.pendingLogout
            || tokens.pendingRegistration != stored.pendingRegistration || tokens.providerAccounts != providerAccounts
            || tokens.pendingStepUps != stepUps
    }
}
