import EntitlementEngine
import Testing

extension TransitionCoverageTests {
    /// Step-up rows no script reaches: with a manual clock a step-up's timer always fires before a late
    /// report can arrive, and the re-authentication form (the TV provider's decision) raced or ended by
    /// another instance needs two decisions in flight at chosen moments. `entitle check --step-up`
    /// reaches the provider form of each.
    static func stepUpRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        let token = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: start.adding(.seconds(86_400)))
        let advice = StepUpAdvice(kind: .authenticateToService, value: "hba_policies")
        let hba = BackendResponse.decisions([
            V2Decision(
                resource: "sports", serviceProvider: "r", mvpd: "m", authorized: false, source: .mvpd,
                error: V2EnhancedError(
                    status: 403, code: "authorization_denied_by_hba_policies", message: "The home-based authentication policy denied the request.",
                    action: .authentication))
        ])
        var settings = EngineSettings()
        settings.stepUp = StepUpSettings(resources: ["sports"], timeout: .seconds(60))
        var rows: Set<TransitionRow> = []
        func configured() -> EntitlementMachine {
            var machine = EntitlementMachine(settings: settings, deviceID: "d")
            machine.recordsTransitions = true
            _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
            _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: token, deviceID: "d")), at: start)
            return machine
        }
        func record(_ phase: PendingStepUp.Phase) -> StoredTokens {
            StoredTokens(
                authentication: token, deviceID: "d",
                pendingStepUps: [
                    PendingStepUp(
                        resource: "sports", data: [:], provider: ProviderLink.tvProviderID, advice: advice, phase: phase,
                        expires: start.adding(.seconds(60)))
                ])
        }

        // Another instance's re-authentication step-up appears while this one's decision is out: the denial
        // waits for that step-up instead of asking the app for a second.
        var raced = configured()
        _ = raced.handle(.callReceived(CallID(2), .getAuthorization(resource: "sports", data: [:])), at: start)
        _ = raced.handle(.storageChanged(record(.awaiting)), at: start)
        var effects = raced.handle(.backendAnswered(OperationID(2, owner: .authorization), hba), at: start).effects
        #expect(!effects.contains { if case .emit(.stepUpRequired, _) = $0 { true } else { false } }, "\(effects)")
        rows.formUnion(raced.lastTransitions)

        // This instance asks again after the user's new login, and another instance's logout ends the step-up.
        var completing = configured()
        _ = completing.handle(.callReceived(CallID(2), .getAuthorization(resource: "sports", data: [:])), at: start)
        _ = completing.handle(.backendAnswered(OperationID(2, owner: .authorization), hba), at: start)
        _ = completing.handle(.callReceived(CallID(3), .completeStepUp(resource: "sports", succeeded: true)), at: start)
        effects = completing.handle(
            .storageChanged(record(.answered(.failed(code: "USER_NOT_AUTHENTICATED_ERROR", description: "The user logged out.")))), at: start
        ).effects
        let loggedOut = Callback.tokenRequestFailed(resource: "sports", errorCode: "USER_NOT_AUTHENTICATED_ERROR", errorDescription: "The user logged out.")
        #expect(effects.contains(.emit(loggedOut, answering: [CallID(2)])) && effects.contains(.emit(loggedOut, answering: [CallID(3)])), "\(effects)")
        rows.formUnion(completing.lastTransitions)

        // The app's report comes at the step-up's deadline, before its timer fired: ended as the timer ends
        // it, and the report refused.
        var late = configured()
        _ = late.handle(.callReceived(CallID(2), .getAuthorization(resource: "sports", data: [:])), at: start)
        _ = late.handle(.backendAnswered(OperationID(2, owner: .authorization), hba), at: start)
        effects = late.handle(.callReceived(CallID(3), .completeStepUp(resource: "sports", succeeded: true)), at: start.adding(.seconds(60))).effects
        #expect(
            effects.contains(
                .emit(
                    .tokenRequestFailed(resource: "sports", errorCode: "STEP_UP_TIMEOUT", errorDescription: "The step-up was not completed in time."),
                    answering: [CallID(2)])), "\(effects)")
        #expect(effects.contains { if case .emit(.status, [CallID(3)]) = $0 { true } else { false } }, "\(effects)")
        rows.formUnion(late.lastTransitions)
        return rows
    }

    /// The provider form, with a store that lost a write: this instance asks again with the transaction,
    /// and before its answer comes the store holds the step-up granted through another instance (the store
    /// forgot this instance's `completing` mark, so the other completed it too): the call takes that token,
    /// and its own answer reaches nobody. `entitle check --step-up --lost-writes` found it.
    static func providerStepUpRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        var settings = EngineSettings()
        settings.providers = [ProviderLink(id: "kids")]
        settings.stepUp = StepUpSettings(resources: ["horror"], timeout: .seconds(60))
        let advice = StepUpAdvice(kind: .transaction, value: "TransactionConditionAdvice", transactionID: "T1")
        var machine = EntitlementMachine(settings: settings, deviceID: "d")
        machine.recordsTransitions = true
        var asked: [OperationID] = []
        func handle(_ input: Input) -> [Action] {
            let effects = machine.handle(input, at: start).effects
            for case .askProvider(let operation, _, _, _) in effects { asked.append(operation) }
            return effects
        }
        _ = handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
        _ = handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty))
        _ = handle(.providerAnswered(asked.removeFirst(), .verified(.success(.nothing))))  // its verification at setRequestor
        _ = handle(.callReceived(CallID(2), .getAuthorization(resource: "horror", data: [:])))
        _ = handle(.providerAnswered(asked[0], .credentials(.failure(.stepUpRequired(advice)))))
        _ = handle(.callReceived(CallID(3), .completeStepUp(resource: "horror", succeeded: true)))
        let granted = PendingStepUp(
            resource: "horror", data: [:], provider: "kids", advice: advice, phase: .answered(.token("media-1")),
            expires: start.adding(.seconds(60)))
        let effects = handle(.storageChanged(StoredTokens(deviceID: "d", pendingStepUps: [granted])))
        #expect(effects.contains { if case .emit(.setToken(token: "media-1", resource: "horror"), _) = $0 { true } else { false } }, "\(effects)")
        return Set(machine.lastTransitions)
    }
}
