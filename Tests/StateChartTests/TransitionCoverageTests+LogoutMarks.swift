import EntitlementEngine
import EntitlementTestSupport
import Testing

extension TransitionCoverageTests {
    /// Logout-mark rows no script reaches: a node signed in with a TV provider has the decision and a
    /// pre-authorization in flight when it next reads the store, and finds a sign-in there again — but
    /// also a logout mark it had not seen (the device logged out through another node and signed in
    /// again through a third in between). What it asked before the logout ends as its own logout would
    /// end it; the new sign-in stands. And a node waiting for the app's step-up finds, with the mark, a
    /// newer step-up for the resource in the store (made after the logout ended its own): its call ends as
    /// a logout here would end it (`entitle check --step-up` found the provider form of this). Only that last
    /// row is the drives' alone: a device without a mark that finds another login in the store ends the
    /// decision and the pre-authorization the same way, and a scenario reaches that
    /// (`engines-a-logout-and-a-new-login-elsewhere-end-what-the-old-login-asked`).
    static func logoutMarkRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        let day = start.adding(.seconds(86_400))
        let before = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: day)
        let after = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: day.adding(.seconds(60)))
        var machine = EntitlementMachine(deviceID: "d")
        machine.recordsTransitions = true
        var rows: Set<TransitionRow> = []
        func handle(_ input: Input) -> [Action] {
            let effects = machine.handle(input, at: start).effects
            rows.formUnion(machine.lastTransitions)
            return effects
        }
        _ = handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
        _ = handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: before, deviceID: "d")))
        _ = handle(.callReceived(CallID(2), .getAuthorization(resource: "film", data: [:])))
        _ = handle(.callReceived(CallID(3), .checkPreauthorizedResources(["film"], cache: false)))
        let effects = handle(.storageChanged(StoredTokens(authentication: after, deviceID: "d", loggedOut: start)))
        #expect(effects.contains { if case .emit(.tokenRequestFailed(resource: "film", _, _), [CallID(2)]) = $0 { true } else { false } }, "\(effects)")
        #expect(effects.contains { if case .emit(.preauthorizedResources([]), [CallID(3)]) = $0 { true } else { false } }, "\(effects)")
        expectEqual(machine.authentication, .authenticated(after), "the sign-in made after the logout stands")

        var settings = EngineSettings()
        settings.stepUp = StepUpSettings(resources: ["sports"], timeout: .seconds(60))
        var waiting = EntitlementMachine(settings: settings, deviceID: "d")
        waiting.recordsTransitions = true
        _ = waiting.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
        _ = waiting.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: before, deviceID: "d")), at: start)
        _ = waiting.handle(.callReceived(CallID(2), .getAuthorization(resource: "sports", data: [:])), at: start)
        let denial = V2EnhancedError(
            status: 403, code: "authorization_denied_by_hba_policies", message: "The home-based authentication policy denied the request.",
            action: .authentication)
        let hba = V2Decision(resource: "sports", serviceProvider: "r", mvpd: "m", authorized: false, source: .mvpd, error: denial)
        _ = waiting.handle(.backendAnswered(OperationID(2, owner: .authorization), .decisions([hba])), at: start)
        let newer = PendingStepUp(
            resource: "sports", data: [:], provider: ProviderLink.tvProviderID,
            advice: StepUpAdvice(kind: .authenticateToService, value: "hba_policies"), phase: .awaiting, expires: start.adding(.seconds(90)))
        let ended = waiting.handle(
            .storageChanged(StoredTokens(authentication: after, deviceID: "d", pendingStepUps: [newer], loggedOut: start)), at: start
        ).effects
        rows.formUnion(waiting.lastTransitions)
        #expect(ended.contains { if case .emit(.tokenRequestFailed(resource: "sports", _, _), [CallID(2)]) = $0 { true } else { false } }, "\(ended)")
        return rows
    }
}
