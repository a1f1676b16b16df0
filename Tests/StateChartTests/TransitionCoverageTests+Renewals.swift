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
        handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
        handle(
            .configurationLoaded(
                OperationID(1, owner: .configuration), configuration, StoredTokens(deviceID: "d", providerAccounts: ["magazine": ProviderAccount(userToken: "T1")])))
        handle(.providerAnswered(asked[0], .verified(.success(ProviderView(resources: ["issue-1"])))))
        // Renewed here: T1 → T2.
        handle(.callReceived(CallID(2), .getAuthorization(resource: "issue-1", data: [:])))
        handle(.providerAnswered(asked[1], .credentials(.failure(.invalidToken))))
        handle(.providerAnswered(asked[2], .renewed(.success("T2"))))
        // Its verification cannot say (the renewal counts as recent); T2 is invalid too while another
        // instance marks its renewal: this one waits, past a newer mark.
        handle(.providerAnswered(asked[3], .verified(.failure(.networkFailure))))
        handle(.storageChanged(Self.marked("T2", until: start.adding(.seconds(60)))))
        handle(.providerAnswered(asked[4], .credentials(.failure(.invalidToken))))
        handle(.storageChanged(Self.marked("T2", until: start.adding(.seconds(120)))))
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
            let loaded = other.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, Self.marked("T1", until: start.adding(.seconds(300)))), at: start).effects
            rows.formUnion(other.lastTransitions)
            guard case .askProvider(let verification, _, .verify, _)? = loaded.first(where: { if case .askProvider = $0 { true } else { false } }) else {
                Issue.record("no verification at setRequestor: \(loaded)")
                continue
            }
            _ = other.handle(.providerAnswered(verification, .verified(verified)), at: start)
            rows.formUnion(other.lastTransitions)
            guard !invalidAtConfiguration else { continue }
            let due = other.handle(.timerFired(.providerVerification("magazine")), at: start.adding(.seconds(60))).effects
            guard case .askProvider(let operation, _, .verify, _)? = due.first else {
                Issue.record("no verification: \(due)")
                continue
            }
            let waited = other.handle(.providerAnswered(operation, .verified(.failure(.invalidToken))), at: start.adding(.seconds(60))).effects
            #expect(
                waited == [.cancelTimer(.requestDeadline(operation)), .startTimer(.renewalElsewhere("magazine"), at: start.adding(.seconds(300)))],
                "\(waited)")
            rows.formUnion(other.lastTransitions)
        }

        return rows.union(awaitingRenewalRows())
    }

    /// A sign-in whose verification says the token is invalid while another instance renews it (the
    /// service forgot it; that instance found it first): the sign-in waits for that renewal instead of
    /// renewing the token a second time (`entitle check --subscription` found the second renewal), and is
    /// answered once the new token is verified here. Then what else may meet the wait: a newer mark, the
    /// mark stopping standing (renewed here, or nothing renewed when the store refuses the mark), a sign-in
    /// (busy), a sign-out here or elsewhere, a new `setRequestor`.
    static func awaitingRenewalRows() -> Set<TransitionRow> {
        let start = Timestamp(milliseconds: 1_000)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [MVPD(id: "m", displayName: "M")])
        var settings = EngineSettings()
        settings.providers = [ProviderLink(id: "magazine", signsIn: true, renewsTokens: true)]
        var rows: Set<TransitionRow> = []
        func answersSignIn(_ effects: [Action], signedIn: Bool) -> Bool {
            effects.contains { if case .emit(.providerSignInStatus(provider: "magazine", signedIn, _, _), [CallID(2)]) = $0 { true } else { false } }
        }
        /// The operation of `request` among `effects`; none (0) when it was not asked, so that what follows fails.
        func asks(_ effects: [Action], _ request: ProviderRequest) -> OperationID {
            for case .askProvider(let operation, _, let asked, _) in effects where asked == request { return operation }
            return OperationID(0, owner: nil)
        }
        func step(_ machine: inout EntitlementMachine, _ input: Input, at time: Timestamp = start) -> [Action] {
            let effects = machine.handle(input, at: time).effects
            rows.formUnion(machine.lastTransitions)
            return effects
        }
        /// A machine configured with nobody signed in whose call #2 signed in (T1), and its verification's operation.
        func verifyingASignIn() -> (machine: EntitlementMachine, verification: OperationID) {
            var machine = EntitlementMachine(settings: settings, deviceID: "d")
            machine.recordsTransitions = true
            _ = step(&machine, .callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])))
            _ = step(&machine, .configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty))
            let signIn = step(&machine, .callReceived(CallID(2), .signIn(provider: "magazine", credentials: ["username": "bob"])))
            let verification = asks(step(&machine, .providerAnswered(asks(signIn, .signIn(["username": "bob"])), .signedIn(.success("T1")))), .verify)
            return (machine, verification)
        }
        /// A machine whose sign-in (call #2) waits for another instance's renewal of T1, marked for a minute.
        func waiting() -> (machine: EntitlementMachine, effects: [Action]) {
            var (machine, verification) = verifyingASignIn()
            _ = step(&machine, .storageChanged(Self.marked("T1", until: start.adding(.seconds(60)))))
            let effects = step(&machine, .providerAnswered(verification, .verified(.failure(.invalidToken))))
            return (machine, effects)
        }

        // The new token arrives: verified here, then the sign-in is answered with what the provider says.
        var (renewed, effects) = waiting()
        #expect(!answersSignIn(effects, signedIn: true) && asks(effects, .renew) == OperationID(0, owner: nil), "\(effects)")
        effects = step(&renewed, .storageChanged(StoredTokens(deviceID: "d", providerAccounts: ["magazine": ProviderAccount(userToken: "T2")])))
        effects = step(&renewed, .providerAnswered(asks(effects, .verify), .verified(.success(ProviderView(resources: ["issue-1"])))))
        #expect(answersSignIn(effects, signedIn: true), "\(effects)")

        // A newer mark when the wait ends; then the mark stops standing: renewed here, once.
        var lapsed = waiting().machine
        _ = step(&lapsed, .storageChanged(Self.marked("T1", until: start.adding(.seconds(120)))))
        _ = step(&lapsed, .timerFired(.renewalElsewhere("magazine")), at: start.adding(.seconds(60)))
        effects = step(&lapsed, .timerFired(.renewalElsewhere("magazine")), at: start.adding(.seconds(120)))
        #expect(asks(effects, .renew) != OperationID(0, owner: nil), "\(effects)")

        // A second sign-in meanwhile is refused (busy); a sign-out here or elsewhere, a renewal the store
        // refuses to mark, or a new requestor answers the waiting sign-in.
        var busy = waiting().machine
        effects = step(&busy, .callReceived(CallID(3), .signIn(provider: "magazine", credentials: ["username": "bob"])))
        #expect(!answersSignIn(effects, signedIn: true), "\(effects)")
        var signedOut = waiting().machine
        #expect(answersSignIn(step(&signedOut, .callReceived(CallID(3), .signOut(provider: "magazine"))), signedIn: false))
        var signedOutElsewhere = waiting().machine
        #expect(answersSignIn(step(&signedOutElsewhere, .storageChanged(StoredTokens(deviceID: "d"))), signedIn: false))
        var unmarked = waiting().machine
        effects = step(&unmarked, .renewalNotMarked(provider: "magazine", reason: "the store is down"), at: start.adding(.seconds(60)))
        #expect(effects.contains { if case .emit(.providerSignInStatus("magazine", true, ErrorCode.storageWriteFailed, _), [CallID(2)]) = $0 { true } else { false } }, "\(effects)")
        var reconfigured = waiting().machine
        #expect(answersSignIn(step(&reconfigured, .callReceived(CallID(3), .setRequestor(requestorID: "r", serviceProviders: []))), signedIn: true))

        // A sign-in whose token this instance renewed a moment ago (the service forgot the first at once),
        // found invalid again while another instance renews it: when that renewal stops standing the user is
        // signed out, as on one instance (`entitle check --subscription --depth 9` took this row).
        var (again, verification) = verifyingASignIn()
        let renewal = asks(step(&again, .providerAnswered(verification, .verified(.failure(.invalidToken)))), .renew)
        let reverification = asks(step(&again, .providerAnswered(renewal, .renewed(.success("T2")))), .verify)
        _ = step(&again, .storageChanged(Self.marked("T2", until: start.adding(.seconds(60)))))
        _ = step(&again, .providerAnswered(reverification, .verified(.failure(.invalidToken))))
        effects = step(&again, .timerFired(.renewalElsewhere("magazine")), at: start.adding(.seconds(60)))
        #expect(answersSignIn(effects, signedIn: false), "\(effects)")
        return rows
    }

    /// Stored tokens holding `token` for the magazine, marked as being renewed elsewhere until `until`.
    static func marked(_ token: String, until: Timestamp) -> StoredTokens {
        var account = ProviderAccount(userToken: token)
        account.renewingUntil = until
        return StoredTokens(deviceID: "d", providerAccounts: ["magazine": account])
    }
}
