import EntitlementEngine
import EntitlementTestSupport
import Testing

extension TransitionCoverageTests {
    /// A node still asking for the platform's partner session (cookbook D, before its picker opens) reads
    /// what another node did for the device meanwhile: a sign-in (the login is done, its calls answered),
    /// a login started there (the redirect may come here), a registration code shown there (shown here
    /// too and polled), or nothing that ends the choice (the request goes on). The scripts' platform
    /// devices have one engine, so the bare machine drives these.
    static func partnerSessionElsewhereRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M", enablePlatformServices: true)])
        let token = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: start.adding(.seconds(86_400)))
        let login = PendingLogin(mvpdID: "m", state: "s", code: "C", deadline: start.adding(.seconds(600)))
        let registration = PendingRegistration(mvpdID: "m", code: "REG", expires: start.adding(.seconds(600)))
        let stores: [(StoredTokens, AuthenticationState.Kind)] = [
            (StoredTokens(authentication: token, deviceID: "d"), .authenticated),
            (StoredTokens(deviceID: "d", pendingLogin: login), .awaitingRedirect),
            (StoredTokens(deviceID: "d", pendingRegistration: registration), .awaitingSecondScreen),
            (StoredTokens(selectedProvider: "m", deviceID: "d"), .requestingPartnerSession),
        ]
        var settings = EngineSettings()
        settings.platformSSO = true
        settings.secondScreen = SecondScreen(pollInterval: .seconds(5), codeLifetime: .seconds(600))
        var rows: Set<TransitionRow> = []
        for (stored, expected) in stores {
            var machine = EntitlementMachine(settings: settings, deviceID: "d")
            machine.recordsTransitions = true
            _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
            _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: start)
            // `setRequestor` first asks the platform silently (operation 2); no partner session there.
            _ = machine.handle(.backendFailed(OperationID(2, owner: .configuration), .timeout), at: start)
            _ = machine.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: start)
            expectEqual(machine.authentication.kind, .requestingPartnerSession, "asking for the partner session")
            let effects = machine.handle(.storageChanged(stored), at: start).effects
            rows.formUnion(machine.lastTransitions)
            expectEqual(machine.authentication.kind, expected, "after reading \(stored): \(effects)")
            if expected == .authenticated {
                #expect(effects.contains { if case .emit(.setAuthenticationStatus(status: 1, _), [CallID(2)]) = $0 { true } else { false } }, "\(effects)")
            }
            if expected == .awaitingSecondScreen {
                #expect(effects.contains { if case .emit(.status(_), _) = $0 { true } else { false } }, "the code is shown: \(effects)")
            }
            // The partner session's late answer changes nothing once the login went on without it.
            let late = machine.handle(.backendFailed(OperationID(3, owner: .authentication), .timeout), at: start).effects
            if expected != .requestingPartnerSession {
                expectEqual(machine.authentication.kind, expected, "a late partner-session answer after \(stored): \(late)")
            }
        }
        return rows
    }
}
