import EntitlementEngine
import EntitlementTestSupport
import Testing

extension TransitionCoverageTests {
    /// A node still asking for the platform's partner session (cookbook D, before its picker opens) reads
    /// what another node did for the device meanwhile: a sign-in (the login is done, its calls answered),
    /// a login started there (the redirect may come here), a registration code shown there (read,
    /// then shown here too and polled), or nothing that ends the choice (the request goes on). The scripts' platform
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
            var machine = askingForThePartnerSession(settings, configuration, start: start)
            expectEqual(machine.authentication.kind, .requestingPartnerSession, "asking for the partner session")
            let effects = machine.handle(.storageChanged(stored), at: start).effects
            rows.formUnion(machine.lastTransitions)
            expectEqual(machine.authentication.kind, expected, "after reading \(stored): \(effects)")
            if expected == .authenticated {
                #expect(effects.contains { if case .emit(.setAuthenticationStatus(status: 1, _), [CallID(2)]) = $0 { true } else { false } }, "\(effects)")
            }
            if expected == .awaitingSecondScreen {
                #expect(effects.contains { if case .callBackend(_, .profileByCode(_, code: "REG")) = $0 { true } else { false } }, "the code is read before it is shown: \(effects)")
            }
            // The partner session's late answer changes nothing once the login went on without it.
            let late = machine.handle(.backendFailed(OperationID(3, owner: .authentication), .timeout), at: start).effects
            if expected != .requestingPartnerSession {
                expectEqual(machine.authentication.kind, expected, "a late partner-session answer after \(stored): \(late)")
            }
        }
        rows.formUnion(platformSignInEndedElsewhereRows(settings, configuration, token: token, start: start))
        return rows
    }

    /// A node reading the profile of a sign-in made in the platform's picker learns that the device logged
    /// out through another node — the sign-in made there (the platform signs every node in) gone from the
    /// store, or a logout waiting for its redirect there: the sign-in ends unsigned here, and its profile,
    /// when it comes, is late. `entitle check --platform` found the second.
    static func platformSignInEndedElsewhereRows(
        _ settings: EngineSettings, _ configuration: RequestorConfiguration, token: AuthenticationToken, start: Timestamp
    ) -> Set<TransitionRow> {
        let logout = PendingLogout(state: "L", deadline: start.adding(.seconds(600)), mvpdID: "m")
        let partner = V2Session(
            actionName: .partnerProfile, actionType: .direct, reasonType: .none, url: "https://sp/profiles/sso/Apple", sessionID: "sid",
            serviceProvider: "r", authenticationRequest: V2PartnerRequest(type: "saml", request: "R", attributeNames: ["userID"]))
        var rows: Set<TransitionRow> = []
        for endings in [[StoredTokens(authentication: token, deviceID: "d"), StoredTokens(deviceID: "d")], [StoredTokens(deviceID: "d", pendingLogout: logout)]] {
            var machine = askingForThePartnerSession(settings, configuration, start: start)
            let picker = machine.handle(.backendAnswered(OperationID(3, owner: .authentication), .session(partner)), at: start).effects
            guard let flow = picker.lazy.compactMap({ if case .presentPlatformPicker(let flow, _, _, _) = $0 { flow } else { nil } }).first else {
                Issue.record("no platform picker: \(picker)")
                return rows
            }
            let assertion = PlatformAssertion(mvpdID: "m", serialized: "vsa.x.y")
            _ = machine.handle(.platformPickerAnswered(flow, .signedIn(assertion)), at: start)
            expectEqual(machine.authentication.kind, .readingProfile, "reading the partner profile")
            var effects: [Action] = []
            for stored in endings {
                effects += machine.handle(.storageChanged(stored), at: start).effects
                rows.formUnion(machine.lastTransitions)
            }
            #expect(
                effects.contains(.emit(.setAuthenticationStatus(status: 0, errorCode: "USER_NOT_AUTHENTICATED_ERROR"), answering: [CallID(2)])),
                "\(effects)")
            let profile = V2Profile(
                notBefore: start, notAfter: token.expires, issuer: "m", kind: .appleSSO, attributes: ["userID": .init(value: .string("u"))])
            let late = machine.handle(.backendAnswered(OperationID(4, owner: .authentication), .profiles(["m": profile])), at: start).effects
            #expect(machine.authentication.kind != .authenticated, "the late profile signs nobody in: \(late)")
        }
        return rows
    }

    /// A platform device's machine, configured, whose `getAuthentication` (call 2) asks for the platform's
    /// partner session (operation 3): `setRequestor`'s silent question (operation 2) found none.
    static func askingForThePartnerSession(
        _ settings: EngineSettings, _ configuration: RequestorConfiguration, start: Timestamp
    ) -> EntitlementMachine {
        var machine = EntitlementMachine(settings: settings, deviceID: "d")
        machine.recordsTransitions = true
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: start)
        _ = machine.handle(.backendFailed(OperationID(2, owner: .configuration), .timeout), at: start)
        _ = machine.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: start)
        return machine
    }
}
