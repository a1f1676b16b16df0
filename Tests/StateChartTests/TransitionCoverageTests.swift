import EntitlementEngine
import EntitlementScenarios
import Foundation
import Testing

/// Every row of the table must be taken by something: a scenario in `Tests/Scenarios`, or — for
/// the rows no script can reach — a direct drive of the bare machine below.
@Suite("Every transition is exercised")
struct TransitionCoverageTests {
    /// Rows the scenario library cannot reach: with a manual clock the deadline timer always fires
    /// before a later URL can arrive, so "the URL came after the deadline but before the timer" is
    /// driven on the bare machine (with a slow system clock it does happen); a script cannot plant
    /// another device's tokens in storage; and a script drives one engine, while the storage rows
    /// need a second instance (tested end to end in `SharedSessionTests`); a script answers the
    /// platform picker before it opens, so the calls made while it is open are driven here too;
    /// a script's storage never fails a save.
    static func machineOnlyRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let late = start.adding(.seconds(600))
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        let day = start.adding(.seconds(86_400))
        let session = V2Session(
            actionName: .authenticate, actionType: .interactive, reasonType: .none, url: "https://sp/authenticate/r/C",
            code: "C", sessionID: "sid", serviceProvider: "r", notBefore: start, notAfter: day)
        var rows: Set<TransitionRow> = []
        func configured() -> EntitlementMachine {
            var machine = EntitlementMachine(deviceID: "d")
            machine.recordsTransitions = true
            _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
            _ = machine.handle(.configurationLoaded(OperationID(1), configuration, .empty), at: start)
            return machine
        }
        var login = configured()
        _ = login.handle(.callReceived(CallID(2), .setSelectedProvider("m")), at: start)
        _ = login.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
        _ = login.handle(.backendAnswered(OperationID(2), .session(session)), at: start)
        _ = login.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=s&mvpd=m")), at: late)
        rows.formUnion(login.lastTransitions)
        let token = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: day)
        var logout = EntitlementMachine(deviceID: "d")
        logout.recordsTransitions = true
        _ = logout.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = logout.handle(.configurationLoaded(OperationID(1), configuration, StoredTokens(authentication: token, deviceID: "d")), at: start)
        _ = logout.handle(.callReceived(CallID(2), .logout), at: start)
        _ = logout.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
        let interactive = V2Logout(actionName: .logout, actionType: .interactive, mvpd: "m", url: "https://mvpd/logout")
        _ = logout.handle(.backendAnswered(OperationID(2), .logouts(["m": interactive])), at: start)
        _ = logout.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=s")), at: late)
        rows.formUnion(logout.lastTransitions)
        // Tokens another device stored (a copied or tampered store): cleared with SEC412.
        var foreign = EntitlementMachine(deviceID: "d")
        foreign.recordsTransitions = true
        _ = foreign.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = foreign.handle(.configurationLoaded(OperationID(1), configuration, StoredTokens(selectedProvider: "m", deviceID: "other")), at: start)
        rows.formUnion(foreign.lastTransitions)
        // Another instance shares the storage (one engine per script cannot do that): it logs in,
        // logs in again, logs out, starts a login, and completes a login this instance waits for.
        var shared = configured()
        func drive(_ input: Input) {
            _ = shared.handle(input, at: start)
            rows.formUnion(shared.lastTransitions)
        }
        let other = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u2", expires: day)
        drive(.storageChanged(StoredTokens(authentication: token, deviceID: "d")))
        drive(.storageChanged(StoredTokens(authentication: other, deviceID: "d")))
        drive(.storageChanged(.empty))
        let pending = PendingLogin(mvpdID: "m", state: "s", code: "C", deadline: start.adding(.seconds(600)))
        drive(.storageChanged(StoredTokens(deviceID: "d", pendingLogin: pending)))
        // The other instance restarts that login, then takes its redirect.
        let restartedLogin = PendingLogin(mvpdID: "m", state: "s2", code: "C2", deadline: start.adding(.seconds(600)))
        drive(.storageChanged(StoredTokens(deviceID: "d", pendingLogin: restartedLogin)))
        drive(.storageChanged(StoredTokens(selectedProvider: "m", deviceID: "d")))
        drive(.callReceived(CallID(9), .getAuthorization(resource: "x", data: [:])))
        drive(.storageChanged(StoredTokens(authentication: token, deviceID: "d")))
        // A save fails (a script's storage never does): once configured, and once for the state a
        // reconfiguration abandons.
        var failing = configured()
        _ = failing.handle(.callReceived(CallID(2), .setSelectedProvider("m")), at: start)
        _ = failing.handle(.storageWriteFailed("disk full"), at: start)
        rows.formUnion(failing.lastTransitions)
        _ = failing.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
        _ = failing.handle(.backendAnswered(OperationID(2), .session(session)), at: start)
        _ = failing.handle(.callReceived(CallID(3), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = failing.handle(.storageWriteFailed("disk full"), at: start)
        rows.formUnion(failing.lastTransitions)
        // An engine restarted in the middle of a login resumes it.
        var restarted = EntitlementMachine(deviceID: "d")
        restarted.recordsTransitions = true
        _ = restarted.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = restarted.handle(.configurationLoaded(OperationID(1), configuration, StoredTokens(deviceID: "d", pendingLogin: pending)), at: start)
        rows.formUnion(restarted.lastTransitions)
        // While the platform picker is open (a script answers it ahead of time, so it cannot act
        // in between): a second call joins, a stray redirect is refused, and the app's own choice,
        // a TempPass, a cancel, a logout or a new requestor each close the picker.
        let platformConfiguration = RequestorConfiguration(
            requestorID: "r",
            mvpds: [MVPD(id: "m", displayName: "M", enablePlatformServices: true), MVPD(id: "tp", displayName: "TP", isTempPass: true)])
        let interruptions: [EntitlementCall] = [
            .getAuthentication(forceAuthn: false, data: [:]), .handleExternalURL("adobepass://ios.app?code=c&state=s"),
            .setSelectedProvider("m"), .setSelectedProvider("tp"), .setSelectedProvider(nil), .logout,
            .setRequestor(requestorID: "r", serviceProviders: []),
        ]
        for call in interruptions {
            var settings = EngineSettings()
            settings.platformSSO = true
            var picking = EntitlementMachine(settings: settings, deviceID: "d")
            picking.recordsTransitions = true
            _ = picking.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
            _ = picking.handle(.configurationLoaded(OperationID(1), platformConfiguration, .empty), at: start)
            _ = picking.handle(.platformSignInChecked(OperationID(2), nil), at: start)
            _ = picking.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: start)
            _ = picking.handle(.callReceived(CallID(3), call), at: start)
            rows.formUnion(picking.lastTransitions)
        }
        // A TempPass chosen while a second-screen login fetches or shows its code (scripts use the
        // default world, which has no TempPass on a second-screen device's requestor).
        for shown in [false, true] {
            var settings = EngineSettings()
            settings.secondScreen = SecondScreen()
            var tv = EntitlementMachine(settings: settings, deviceID: "d")
            tv.recordsTransitions = true
            _ = tv.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
            _ = tv.handle(.configurationLoaded(OperationID(1), platformConfiguration, .empty), at: start)
            _ = tv.handle(.callReceived(CallID(2), .setSelectedProvider("m")), at: start)
            _ = tv.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
            if shown {
                let resume = V2Session(
                    actionName: .resume, actionType: .direct, reasonType: .none, missingParameters: ["redirectUrl"],
                    code: "ABCD2345", sessionID: "sid", serviceProvider: "r", notBefore: start, notAfter: start.adding(.seconds(600)))
                _ = tv.handle(.backendAnswered(OperationID(2), .session(resume)), at: start)
            }
            _ = tv.handle(.callReceived(CallID(3), .setSelectedProvider("tp")), at: start)
            rows.formUnion(tv.lastTransitions)
        }
        return rows
    }

    @Test func everyRowIsTakenByAScenarioOrAMachineDrive() async throws {
        let folder = ChartConformanceTests.root.appendingPathComponent("Tests/Scenarios").path
        var exercised: Set<TransitionRow> = []
        for file in try ScenarioLibrary.files(at: [folder]) {
            let result = await ScenarioRunner().run(try ScenarioLibrary.load(file))
            #expect(result.passed, "\(result.failure?.description ?? "")")
            exercised.formUnion(result.transitionsExercised)
        }
        let byScenarios = exercised
        let machineOnly = Self.machineOnlyRows()
        exercised.formUnion(machineOnly)
        let unexercised = TransitionTable.rowSet.subtracting(exercised).sorted().map(\.description)
        #expect(unexercised.isEmpty, "rows nothing exercises:\n\(unexercised.joined(separator: "\n"))")
        #expect(machineOnly.subtracting(byScenarios).count == 23, "the machine drives should be needed for exactly 23 rows")
        #expect(machineOnly.isSubset(of: TransitionTable.rowSet))
    }
}
