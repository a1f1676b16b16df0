/// What the machine keeps in token storage: built when a save needs it, compared part by part when a step
/// asks whether it must save.
extension EntitlementMachine {
    /// What should be in token storage now (``StoredTokens/empty`` when there is nothing to keep).
    package var storedTokens: StoredTokens { storedTokens(StoredAuthentication(authentication)) }

    /// ``storedTokens``, made of `stored` (the stored part of the authentication state, built once by a
    /// step that compares and then saves).
    func storedTokens(_ stored: StoredAuthentication) -> StoredTokens {
        guard !holdsNothing(stored) else { return .empty }
        return StoredTokens(
            authentication: stored.authentication, selectedProvider: selectedProviderID,
            deviceID: deviceID, pendingLogin: stored.pendingLogin, pendingLogout: stored.pendingLogout, providerAccounts: providerAccounts,
            pendingRegistration: stored.pendingRegistration, pendingStepUps: stepUps, loggedOut: logoutMark)
    }

    /// Whether there is nothing to keep: no authentication, flow, provider choice, account or logout mark.
    private func holdsNothing(_ stored: StoredAuthentication) -> Bool { holdsNothingButALogoutMark(stored) && logoutMark == nil }

    /// Whether there is nothing to keep but (at most) a logout mark.
    private func holdsNothingButALogoutMark(_ stored: StoredAuthentication) -> Bool {
        stored.authentication == nil && selectedProviderID == nil && stored.pendingLogin == nil && stored.pendingLogout == nil
            && providerAccounts.isEmpty && stored.pendingRegistration == nil && stepUps.isEmpty
    }

    /// Whether ``storedTokens`` differs from `tokens`, compared part by part without building it (every
    /// step that writes a stored field asks); `stored` is the stored part of the authentication state.
    func storedTokensDiffer(from tokens: StoredTokens, _ stored: StoredAuthentication) -> Bool {
        if holdsNothing(stored) { return !(tokens.holdsNothing && tokens.deviceID == nil) }  // ``StoredTokens/empty``
        return tokens.deviceID != deviceID || tokens.selectedProvider != selectedProviderID || tokens.authentication != stored.authentication
            || tokens.pendingLogin != stored.pendingLogin || tokens.pendingLogout != stored.pendingLogout
            || tokens.pendingRegistration != stored.pendingRegistration || tokens.providerAccounts != providerAccounts
            || tokens.pendingStepUps != stepUps || tokens.loggedOut != logoutMark
    }

    /// The login whose provider choice (the engine's picker or the platform's) waits for the user, if any.
    package var loginChoosingProvider: FlowID? {
        switch authentication {
        case .login(let flow, .selectingProvider), .login(let flow, .platformPicking): flow.id
        default: nil
        }
    }

    /// Whether nothing but (at most) a logout mark would be kept: for a host, such a session holds nothing
    /// it must keep in memory (the store keeps the mark).
    package var holdsNothingButALogoutMark: Bool { holdsNothingButALogoutMark(StoredAuthentication(authentication)) }

    /// How long a logout mark stays in the store: while a request sent before the logout can still be
    /// answered (a request deadline), with as much again for the node's next read of the store.
    var logoutMarkLifetime: Duration { settings.requestTimeout * 2 }

    /// Marks a logout for the other nodes — with a provider chain (their requests to providers end), with
    /// the platform's sign-in (a sign-in through the platform's picker on another node reads its profile
    /// with nothing in the store to say so: the mark ends it there), and on a second-screen device (a read
    /// of a code the user entered before the logout, answered after it, finds the profile, and a newer code
    /// in the store says nothing of the logout between: the mark ends that login there); with the last two,
    /// a cancel marks too (``marksCancel``) — later than the mark it replaces, so a node that saw the last
    /// one tells the new one apart.
    mutating func markLogout() {
        guard hasProviderChain || marksCancel else { return }
        logoutMark = max(now, logoutMark.map { $0.adding(.milliseconds(1)) } ?? now)
    }

    /// Whether a cancel leaves the logout's mark: it ends every login of the device, and on these devices a
    /// login can finish on another node with nothing in the store to say it was cancelled.
    var marksCancel: Bool { settings.platformSSO || settings.secondScreen != nil }

    /// Before a save: a logout mark older than ``logoutMarkLifetime`` is left out (no request from
    /// before it can still be answered), so a store does not keep it for good.
    mutating func dropLapsedLogoutMark() {
        if let mark = logoutMark, mark.adding(logoutMarkLifetime) <= now { logoutMark = nil }
    }
}
