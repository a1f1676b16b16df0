import EntitlementEngine
import Testing

extension TransitionCoverageTests {
    /// Renewal rows no script reaches: a verification that cannot say, for a provider verified at
    /// `setRequestor` only; another instance's mark on a renewal still stands when the wait for it ends (a
    /// newer renewal began there); a token this instance renewed a moment ago found invalid again once the
    /// other instance's renewal stopped standing (signed out, as on one instance); and a verification, at
    /// `setRequestor` or on the provider's interval, saying the token is invalid while another instance
    /// renews it (the random explorer's seed 311 found the second missing from the table); and a sign-in
    /// whose verification says so while another instance renews the token.
    static func renewalElsewhereRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        var settings = EngineSettings()
        settings.providers = [ProviderLink(id: "magazine", signsIn: true, renewsTokens: true)]
        var machine = EntitlementMachine(settings: settings, deviceID: "d")
        machine.recordsTransitions = true
        var rows: Set<TransitionRow> = []
        var asked: [OperationID] = []
        func handle(_ input: Input, at time: Timestamp = start) {
            let effects = machine.handle(input, at: time).effects
            for case .askProvider(let operation, _, _, _) in effects { asked.append(operation) }
            rows.formUnion(machine.lastTransitions)
        }
        func marked(_ token: String, until: Timestamp) -> StoredTokens {
            var account = ProviderAccount(userToken: token)
            account.renewingUntil = until
            return StoredTokens(deviceID: "d", providerAccounts: ["magazine": account])
        }
        handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
        handle(
            .configurationLoaded(
                OperationID(1), configuration, StoredTokens(deviceID: "d", providerAccounts: ["magazine": ProviderAccount(userToken: "T1")]),
                verified: ["magazine": .success(ProviderView(resources: ["issue-1"]))]))
        // Renewed here: T1 → T2.
        handle(.callReceived(CallID(2), .getAuthorization(resource: "issue-1", data: [:])))
        handle(.providerAnswered(asked[0], .credentials(.failure(.invalidToken))))
        handle(.providerAnswered(asked[1], .renewed(.success("T2"))))
        // Its verification cannot say (the renewal counts as recent); T2 is invalid too while another
        // instance marks its renewal: this one waits, past a newer mark.
        handle(.providerAnswered(asked[2], .verified(.failure(.networkFailure))))
        handle(.storageChanged(marked("T2", until: start.adding(.seconds(60)))))
        handle(.providerAnswered(asked[3], .credentials(.failure(.invalidToken))))
        handle(.storageChanged(marked("T2", until: start.adding(.seconds(120)))))
        handle(.timerFired(.renewalElsewhere("magazine")), at: start.adding(.seconds(60)))
        // That renewal stops standing: T2 was renewed here a moment ago, so the user is signed out.
        let effects = machine.handle(.timerFired(.renewalElsewhere("magazine")), at: start.adding(.seconds(120))).effects
        rows.formUnion(machine.lastTransitions)
        #expect(effects.contains { if case .emit(.tokenRequestFailed(resource: "issue-1", _, _), [CallID(2)]) = $0 { true } else { false } }, "\(effects)")

        // A provider verified on an interval: configured while another instance renews the token (its
        // verification says invalid), and verified again while another renews it: each waits.
        var interval = settings
        interval.providers = [ProviderLink(id: "magazine", signsIn: true, renewsTokens: true, verificationInterval: .seconds(60))]
        for invalidAtConfiguration in [true, false] {
            var other = EntitlementMachine(settings: interval, deviceID: "d")
            other.recordsTransitions = true
            _ = other.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: start)
            let verified: Result<ProviderView, ProviderFailure> = invalidAtConfiguration ? .failure(.invalidToken) : .success(ProviderView(resources: ["issue-1"]))
            _ = other.handle(.configurationLoaded(OperationID(1), configuration, marked("T1", until: start.adding(.seconds(300))), verified: ["magazine": verified]), at: start)
            rows.formUnion(other.lastTransitions)
            guard !invalidAtConfiguration else { continue }
            let due = other.handle(.timerFired(.providerVerification("magazine")), at: start.adding(.seconds(60))).effects
            guard case .askProvider(let operation, _, .verify, _)? = due.first else {
                Issue.record("no verification: \(due)")
                continue
            }
            let waited = other.handle(.providerAnswered(operation, .verified(.failure(.invalidToken))), at: start.adding(.seconds(60))).effects
            #expect(waited == [.startTimer(.renewalElsewhere("magazine"), at: start.adding(.seconds(300)))], "\(waited)")
            rows.formUnion(other.lastTransitions)
        }

        // A sign-in whose verification says the token is invalid while another instance renews it (the
        // service forgot it; that instance found it first): the sign-in is answered — the account stands —
        // and this instance waits for that renewal instead of renewing the token a second time
        // (`entitle check --subscription` found the second renewal).
        var signingIn = EntitlementMachine(settings: settings, deviceID: "d")
        signingIn.recordsTransitions = true
        var signInAsked: [OperationID] = []
        func signInHandle(_ input: Input) -> [Action] {
            let effects = signingIn.handle(input, at: start)
            for case .askProvider(let operation, _, _, _) in effects.effects { signInAsked.append(operation) }
            rows.formUnion(signingIn.lastTransitions)
            return effects.effects
        }
        _ = signInHandle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
        _ = signInHandle(.configurationLoaded(OperationID(1), configuration, .empty))
        _ = signInHandle(.callReceived(CallID(2), .signIn(provider: "magazine", credentials: ["username": "bob"])))
        _ = signInHandle(.providerAnswered(signInAsked[0], .signedIn(.success("T1"))))
        _ = signInHandle(.storageChanged(marked("T1", until: start.adding(.seconds(60)))))
        let answered = signInHandle(.providerAnswered(signInAsked[1], .verified(.failure(.invalidToken))))
        #expect(answered.contains { if case .emit(.providerSignInStatus(provider: "magazine", signedIn: true, _, _), [CallID(2)]) = $0 { true } else { false } }, "\(answered)")
        #expect(!answered.contains { if case .askProvider(_, _, .renew, _) = $0 { true } else { false } }, "\(answered)")
        return rows
    }
}
