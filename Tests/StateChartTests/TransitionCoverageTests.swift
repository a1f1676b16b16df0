import EntitlementEngine
import EntitlementScenarios
import EntitlementTestSupport
import Foundation
import Testing

/// Every row of the table must be taken by something: a scenario in `Tests/Scenarios`, or — for
/// the rows no script can reach — a direct drive of the bare machine below.
@Suite("Every transition is exercised")
struct TransitionCoverageTests {
    /// Rows the scenario library cannot reach: with a manual clock the deadline timer always fires
    /// before a later URL can arrive, so "the URL came after the deadline but before the timer" is
    /// driven on the bare machine (with a slow system clock it does happen), for a login and for a
    /// logout. What happens to a request still asking a provider of the chain, or to an account whose
    /// service has not answered yet — joined, held behind another (one at a time), ended by logout or
    /// a new `setRequestor` — was first driven on the bare machine below; scripts reach most of it now
    /// too (`! provider ID holds its answers`), and the drives stay as a second check. Everything else — other devices' tokens,
    /// second instances on one store, a restarted engine, failed saves, calls while the platform picker
    /// is open — is in the scripts.
    static func machineOnlyRows() -> Set<TransitionRow> {
        lateRedirectRows().union(providerOverlapRows()).union(accountOverlapRows()).union(restartedLogoutRows())
            .union(completingLoginEndedElsewhereRows()).union(stepUpRows())
            .union(renewalElsewhereRows()).union(logoutMarkRows()).union(providerStepUpRows()).union(verificationAtSetRequestorRows())
            .union(partnerSessionElsewhereRows())
    }

    /// An instance that accepted a login's redirect and reads its profile — its read in flight, or waiting
    /// to read again — finds the login gone from the store: cancelled elsewhere (the login ends unsigned),
    /// or logged out elsewhere (it follows that logout). The scripts reach the first only with a read in
    /// flight; `entitle check` reaches them all.
    static func completingLoginEndedElsewhereRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        let session = V2Session(
            actionName: .authenticate, actionType: .interactive, reasonType: .none, url: "https://sp/authenticate/r/C",
            code: "C", sessionID: "sid", serviceProvider: "r", notBefore: start, notAfter: start.adding(.seconds(1800)))
        let logout = StoredTokens(deviceID: "d", pendingLogout: PendingLogout(state: "L", deadline: start.adding(.seconds(600)), mvpdID: "m"))
        var rows: Set<TransitionRow> = []
        for (readAgain, stored) in [(false, logout), (true, StoredTokens(deviceID: "d")), (true, logout)] {
            var machine = EntitlementMachine(deviceID: "d")
            machine.recordsTransitions = true
            _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
            _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: start)
            _ = machine.handle(.callReceived(CallID(2), .setSelectedProvider("m")), at: start)
            _ = machine.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
            _ = machine.handle(.backendAnswered(OperationID(2, owner: .authentication), .session(session)), at: start)
            _ = machine.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=s&mvpd=m")), at: start)
            if readAgain { _ = machine.handle(.backendAnswered(OperationID(3, owner: .authentication), .profiles([:])), at: start) }
            let effects = machine.handle(.storageChanged(stored), at: start).effects
            #expect(effects.contains(.emit(.setAuthenticationStatus(status: 0, errorCode: "USER_NOT_AUTHENTICATED_ERROR"), answering: [CallID(2), CallID(3)])), "\(effects)")
            #expect(machine.authentication.kind != .authenticated)
            rows.formUnion(machine.lastTransitions)
        }
        return rows
    }

    /// An instance waiting for a logout's redirect that another instance started reads the store only
    /// after that logout ended and a new one began (it missed the version between): it waits for the
    /// new one. The scripts' engines read every version, so the bare machine skips one.
    static func restartedLogoutRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        var machine = EntitlementMachine(deviceID: "d")
        machine.recordsTransitions = true
        let first = PendingLogout(state: "S1", deadline: start.adding(.seconds(600)), mvpdID: "m")
        let second = PendingLogout(state: "S2", deadline: start.adding(.seconds(700)), mvpdID: "m")
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(deviceID: "d", pendingLogout: first)), at: start)
        let actions = machine.handle(.storageChanged(StoredTokens(deviceID: "d", pendingLogout: second)), at: start).effects
        #expect(actions.contains(.startTimer(.redirectDeadline(FlowID(1)), at: second.deadline)), "\(actions)")
        return Set(machine.lastTransitions)
    }

    /// A sign-in still running when the next call comes (a second sign-in, a sign-out, a new
    /// `setRequestor`), a verification and a renewal ended by `setRequestor`, a renewal that fails, and a
    /// sign-out ending a sign-in made while signed in (the provider hears of it: there was a token).
    static func accountOverlapRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        var settings = EngineSettings()
        settings.providers = [ProviderLink(id: "sub", signsIn: true, renewsTokens: true), .tvProvider]
        var rows: Set<TransitionRow> = []
        let credentials = ["username": "u", "password": "p"]
        var machine = EntitlementMachine(settings: settings, deviceID: "d")
        machine.recordsTransitions = true
        var operation: UInt64 = 1
        func handle(_ input: Input) {
            let actions = machine.handle(input, at: start).effects
            rows.formUnion(machine.lastTransitions)
            for case .askProvider(let asked, _, _, _) in actions { operation = asked.rawValue }
        }
        func configure() {
            handle(.callReceived(CallID(operation + 100), .setRequestor(requestorID: "r", serviceProviders: [])))
            let asked = operation
            handle(.configurationLoaded(OperationID(operation + 1, owner: .configuration), configuration, machine.storedTokens))
            // A token here: the provider verifies it before `setRequestor` is answered.
            if operation != asked { handle(.providerAnswered(OperationID(operation, owner: .account), .verified(.success(ProviderView(resources: ["a"]))))) }
        }
        handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
        handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty))
        handle(.callReceived(CallID(2), .signIn(provider: "sub", credentials: credentials)))
        handle(.callReceived(CallID(3), .signIn(provider: "sub", credentials: credentials)))  // still signing in
        handle(.callReceived(CallID(4), .signOut(provider: "sub")))  // ends the sign-in
        handle(.callReceived(CallID(5), .signIn(provider: "sub", credentials: credentials)))
        configure()  // a new setRequestor ends the sign-in
        handle(.callReceived(CallID(6), .signIn(provider: "sub", credentials: credentials)))
        handle(.providerAnswered(OperationID(operation, owner: .account), .signedIn(.success("token"))))  // now verifying
        configure()  // ends the verification
        handle(.callReceived(CallID(7), .getAuthorization(resource: "a", data: [:])))
        handle(.providerAnswered(OperationID(operation, owner: .authorization), .credentials(.failure(.invalidToken))))  // renewing
        configure()  // ends the renewal
        handle(.callReceived(CallID(8), .getAuthorization(resource: "a", data: [:])))
        handle(.providerAnswered(OperationID(operation, owner: .authorization), .credentials(.failure(.invalidToken))))  // renewing
        handle(.providerAnswered(OperationID(operation, owner: .account), .renewed(.failure(.invalidToken))))  // the renewal fails
        handle(.callReceived(CallID(9), .signIn(provider: "sub", credentials: credentials)))
        handle(.providerAnswered(OperationID(operation, owner: .account), .signedIn(.success("token"))))  // verifying
        handle(.providerAnswered(OperationID(operation, owner: .account), .verified(.success(ProviderView(resources: ["a"])))))  // signed in
        handle(.callReceived(CallID(10), .signIn(provider: "sub", credentials: credentials)))  // signing in again, with a token
        handle(.callReceived(CallID(11), .signOut(provider: "sub")))  // ends it; the provider hears of the sign-out
        return rows
    }

    /// Two requests for one provider at once, then logout, then the same with a new `setRequestor`.
    static func providerOverlapRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        var settings = EngineSettings()
        settings.providers = [ProviderLink(id: "store", requestsOneAtATime: true), .tvProvider]
        var rows: Set<TransitionRow> = []
        for ending in [EntitlementCall.logout, .setRequestor(requestorID: "r", serviceProviders: [])] {
            var machine = EntitlementMachine(settings: settings, deviceID: "d")
            machine.recordsTransitions = true
            func handle(_ input: Input) {
                _ = machine.handle(input, at: start)
                rows.formUnion(machine.lastTransitions)
            }
            handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
            handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty))  // verifies (operation 2)
            handle(.providerAnswered(OperationID(2, owner: .account), .verified(.success(ProviderView(resources: ["a", "b", "c"])))))
            handle(.callReceived(CallID(2), .getAuthorization(resource: "a", data: [:])))  // asks the store (operation 3)
            handle(.callReceived(CallID(3), .getAuthorization(resource: "b", data: [:])))  // held: the store is busy
            handle(.callReceived(CallID(4), .getAuthorization(resource: "a", data: [:])))  // joins the running one
            handle(.callReceived(CallID(5), .getAuthorization(resource: "b", data: [:])))  // joins the held one
            handle(.providerAnswered(OperationID(3, owner: .authorization), .credentials(.success(ProviderCredentials(token: "t")))))  // b asks now (operation 4)
            handle(.callReceived(CallID(6), .getAuthorization(resource: "c", data: [:])))  // held behind b
            handle(.callReceived(CallID(7), ending))  // ends b (asking) and c (held)
        }
        return rows
    }

    static func lateRedirectRows() -> Set<TransitionRow> {
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
            _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: start)
            return machine
        }
        var login = configured()
        _ = login.handle(.callReceived(CallID(2), .setSelectedProvider("m")), at: start)
        _ = login.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
        _ = login.handle(.backendAnswered(OperationID(2, owner: .authentication), .session(session)), at: start)
        _ = login.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=s&mvpd=m")), at: late)
        rows.formUnion(login.lastTransitions)
        let token = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: day)
        var logout = EntitlementMachine(deviceID: "d")
        logout.recordsTransitions = true
        _ = logout.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = logout.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: token, deviceID: "d")), at: start)
        _ = logout.handle(.callReceived(CallID(2), .logout), at: start)
        _ = logout.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "s")), at: start)
        let interactive = V2Logout(actionName: .logout, actionType: .interactive, mvpd: "m", url: "https://mvpd/logout")
        _ = logout.handle(.backendAnswered(OperationID(2, owner: .authentication), .logouts(["m": interactive])), at: start)
        _ = logout.handle(.callReceived(CallID(3), .handleExternalURL("adobepass://ios.app?state=s")), at: late)
        rows.formUnion(logout.lastTransitions)
        return rows
    }

    /// Whether `row` is neither the accounts region's nor an authorization's asking a provider.
    private static func isNotAboutAskingAProvider(_ row: TransitionRow) -> Bool {
        guard row.region != .accounts else { return false }
        guard row.region == .authorization else { return true }
        let askingStates: Set<String> = ["askingProvider", "waitingForProvider"]
        return !askingStates.contains(row.from) && row.to != "waitingForProvider"
    }

    @Test(.backgroundThread) func everyRowIsTakenByAScenarioOrAMachineDrive() async throws {
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
        let unlisted = exercised.subtracting(TransitionTable.rowSet).sorted().map(\.description)
        #expect(unlisted.isEmpty, "transitions taken that the table does not list:\n\(unlisted.joined(separator: "\n"))")
        let unexercised = TransitionTable.rowSet.subtracting(exercised).sorted().map(\.description)
        #expect(unexercised.isEmpty, "rows nothing exercises:\n\(unexercised.joined(separator: "\n"))")
        let needed = machineOnly.subtracting(byScenarios)
        let late = Self.lateRedirectRows().subtracting(byScenarios)
        expectEqual(late.count, 2, "the late-redirect drives are needed for two rows: \(late.sorted().map(\.description))")
        let restartedLogout = Self.restartedLogoutRows().subtracting(byScenarios)
        expectEqual(restartedLogout.count, 1, "the restarted-logout drive is needed for one row: \(restartedLogout.sorted().map(\.description))")
        let completing = Self.completingLoginEndedElsewhereRows().subtracting(byScenarios)
        expectEqual(completing.count, 3, "the completing-login drives are needed for three rows: \(completing.sorted().map(\.description))")
        let stepUps = Self.stepUpRows().union(Self.providerStepUpRows()).subtracting(byScenarios)
        expectEqual(stepUps.count, 4, "the step-up drives are needed for four rows: \(stepUps.sorted().map(\.description))")
        let renewals = Self.renewalElsewhereRows().subtracting(byScenarios)
        expectEqual(renewals.count, 10, "the renewal drives are needed for ten rows: \(renewals.sorted().map(\.description))")
        let logoutMarks = Self.logoutMarkRows().subtracting(byScenarios)
        expectEqual(logoutMarks.count, 1, "the logout-mark drives are needed for one row: \(logoutMarks.sorted().map(\.description))")
        let verifications = Self.verificationAtSetRequestorRows().subtracting(byScenarios)
        expectEqual(verifications.count, 7, "the drives verifying at setRequestor are needed for seven rows: \(verifications.sorted().map(\.description))")
        let partnerSessions = Self.partnerSessionElsewhereRows().subtracting(byScenarios)
        expectEqual(partnerSessions.count, 5, "the partner-session drives are needed for five rows: \(partnerSessions.sorted().map(\.description))")
        var overlap = needed
        for rows in [late, restartedLogout, completing, stepUps, renewals, logoutMarks, verifications, partnerSessions] { overlap.subtract(rows) }
        overlap = overlap.filter(Self.isNotAboutAskingAProvider)
        #expect(overlap.isEmpty, "the provider drives are needed only for requests still asking a provider:\n\(overlap.sorted().map(\.description).joined(separator: "\n"))")
        #expect(machineOnly.isSubset(of: TransitionTable.rowSet))
    }
}
