/// The accounts region: one small machine per provider of the chain that takes a sign-in (a direct
/// subscription, Pugpig's Security API): sign in (the credentials go to the provider once, never
/// stored), verify what the user may access, renew a token the service calls invalid (or sign out
/// locally when the provider cannot), sign out. The user token and the credentials kept for good are
/// saved with the other tokens (``StoredTokens/providerAccounts``).
extension EntitlementMachine {
    /// What a provider account is doing (none: signed in when it holds a token, else signed out).
    package enum AccountWork: Sendable, Hashable {
        /// The provider checks what the user typed.
        case signingIn(OperationID, calls: [CallID])
        /// The provider says what the user may access (after a sign-in, a renewal, or on its interval).
        case verifying(OperationID, calls: [CallID])
        /// The provider replaces a token its service called invalid.
        case renewing(OperationID, calls: [CallID])
        /// Another instance renews the token a sign-in's verification here found invalid: the sign-in
        /// waits for the new token (then verifies it, as after a renewal here), or renews it here when that
        /// instance's mark stops standing.
        case awaitingRenewal(calls: [CallID])

        /// The request running for the account (none while it waits for another instance).
        var operation: OperationID? {
            switch self {
            case .signingIn(let operation, _), .verifying(let operation, _), .renewing(let operation, _): operation
            case .awaitingRenewal: nil
            }
        }

        var calls: [CallID] {
            switch self {
            case .signingIn(_, let calls), .verifying(_, let calls), .renewing(_, let calls), .awaitingRenewal(let calls): calls
            }
        }
    }

    /// The accounts region's state names.
    package enum AccountKind: String, Sendable, CaseIterable {
        /// No user token.
        case signedOut
        /// See ``AccountWork/signingIn(_:calls:)``.
        case signingIn
        /// A user token, nothing running.
        case signedIn
        /// See ``AccountWork/verifying(_:calls:)``.
        case verifying
        /// See ``AccountWork/renewing(_:calls:)``.
        case renewing
        /// See ``AccountWork/awaitingRenewal(calls:)``.
        case awaitingRenewal
    }

    /// Where `provider`'s account is.
    func accountKind(_ provider: String) -> AccountKind {
        switch accountWork[provider] {
        case .signingIn?: .signingIn
        case .verifying?: .verifying
        case .renewing?: .renewing
        case .awaitingRenewal?: .awaitingRenewal
        case nil: providerAccounts[provider]?.userToken == nil ? .signedOut : .signedIn
        }
    }

    /// Whether an account here holds a token whose grants this instance has not verified yet and is
    /// finding them out (verifying it, renewing it first, or waiting for another instance's renewal): the
    /// calls whose answers depend on what providers claim wait until it knows.
    var findingOutWhatATokenGrants: Bool {
        accountWork.contains { provider, work in
            switch work {
            case .verifying, .renewing, .awaitingRenewal: providerViews[provider] == nil
            case .signingIn: false
            }
        }
    }

    /// The link called `provider` when it takes a sign-in.
    private func signInLink(_ provider: String) -> ProviderLink? {
        settings.providers.first { $0.id == provider && $0.signsIn }
    }

    /// The session request `operation` to `provider` names, with the user token held for it.
    func providerSession(_ provider: String, _ configuration: RequestorConfiguration, _ operation: OperationID) -> ProviderSession {
        var session = ProviderSession.of(
            deviceID: deviceID, requestorID: configuration.requestorID, configuration: configurationOperation,
            userToken: providerAccounts[provider]?.userToken)
        session.requestID = operation.rawValue
        return session
    }

    /// Records a row of the accounts region and moves `provider`'s work.
    private mutating func moveAccount(
        _ provider: String, from before: AccountKind? = nil, to work: AccountWork?, _ condition: TransitionGuard? = nil,
        _ actions: TransitionAction...
    ) {
        moveAccount(provider, from: before, to: work, condition, actions)
    }

    /// ``moveAccount(_:from:to:_:_:)`` with the actions as an array.
    private mutating func moveAccount(
        _ provider: String, from before: AccountKind?, to work: AccountWork?, _ condition: TransitionGuard?, _ actions: [TransitionAction]
    ) {
        let from = before ?? accountKind(provider)
        accountWork[provider] = work
        if recordsTransitions { record(.accounts, from: from.rawValue, to: accountKind(provider).rawValue, condition, actions) }
    }

    /// Another instance sharing the store saved provider accounts (a sign-in, a sign-out, a renewed
    /// token, credentials kept for good): this instance adopts them, so its next save never takes them
    /// back. Only this device's (a store synced across devices keeps each device's accounts), and
    /// silently, as a login adopted from storage is. A sign-out elsewhere wins: what the provider
    /// verified here is forgotten, and a verification or renewal running here ends (its calls are
    /// answered signed out; its answer, when it comes, is late). A sign-in running here goes on. A new
    /// token from elsewhere (a sign-in, a renewal) is verified here at once, as this instance verifies
    /// its own: what the provider says the user may access is per instance, and an instance that never
    /// asked would claim nothing for a signed-in user.
    mutating func adoptProviderAccounts(_ stored: StoredTokens) -> [Action] {
        guard case .configured = configuration, stored.deviceID ?? deviceID == deviceID, stored.providerAccounts != providerAccounts
        else { return [] }
        let providers = Set(providerAccounts.keys).union(stored.providerAccounts.keys).sorted()
        let before = providers.map { (kind: accountKind($0), signedIn: providerAccounts[$0]?.userToken != nil) }
        let tokens = Dictionary(uniqueKeysWithValues: providers.map { ($0, providerAccounts[$0]?.userToken) })
        providerAccounts = stored.providerAccounts
        var actions: [Action] = []
        var newTokens: [String] = []
        for (provider, was) in zip(providers, before) {
            let signedInNow = providerAccounts[provider]?.userToken != nil
            let newToken = signedInNow && providerAccounts[provider]?.userToken != tokens[provider] ?? nil
            switch (accountWork[provider], was.signedIn, signedInNow) {
            case (nil, true, false):
                forgetVerification(provider)
                moveAccount(provider, from: was.kind, to: nil, .storedAccountSignedOut)
                actions += failRenewalWaiters(provider)
            case (nil, _, true) where newToken, (.awaitingRenewal?, true, true) where newToken:
                // Verified below, once the requests that waited for a renewal elsewhere asked again.
                newTokens.append(provider)
            case (.verifying(_, let calls)?, true, false), (.renewing(_, let calls)?, true, false), (.awaitingRenewal(let calls)?, true, false):
                forgetVerification(provider)
                moveAccount(provider, from: was.kind, to: nil, .storedAccountSignedOut, .providerSignInStatus)
                actions += signInStatus(provider, false, .cancelledByUser, answering: calls) + failRenewalWaiters(provider)
            default:
                break  // unchanged, or a sign-in running here, whose answer decides
            }
        }
        guard case .configured(let configuration) = configuration else { return actions }
        // Requests that waited for a renewal elsewhere ask again first, then each new token is verified.
        actions += followRenewalsElsewhere(tokens, configuration)
        for provider in newTokens {
            let signedInBefore = tokens[provider] ?? nil != nil
            let calls = accountWork[provider]?.calls ?? []
            actions += verify(
                provider, calls: calls, signedInBefore ? .renewedElsewhere : .storedAccountSignedIn, configuration,
                from: signedInBefore ? accountKind(provider) : .signedOut)
        }
        return actions
    }

    private func signInStatus(_ provider: String, _ signedIn: Bool, _ failure: ProviderFailure?, message: String = "", answering calls: [CallID])
        -> [Action]
    {
        calls.map {
            .emit(
                .providerSignInStatus(
                    provider: provider, signedIn: signedIn, errorCode: failure?.code ?? "", message: failure?.message ?? message),
                answering: [$0])
        }
    }

    // MARK: - Calls

    mutating func signIn(
        _ id: CallID, _ provider: String, _ credentials: [String: String], _ configuration: RequestorConfiguration
    ) -> [Action] {
        guard signInLink(provider) != nil else {
            recordCall(.unknownProvider, .status)
            return refuse(id, .noSignIn(provider: provider))
        }
        guard accountWork[provider] == nil else {
            recordAccountStay(provider, .accountBusy, .status)
            return refuse(id, .accountBusy(provider: provider))
        }
        let operation = nextOperation(.account)
        moveAccount(provider, to: .signingIn(operation, calls: [id]), nil, .askProvider)
        return [.askProvider(operation, provider: provider, .signIn(credentials), providerSession(provider, configuration, operation))]
    }

    mutating func signOut(_ id: CallID, _ provider: String, _ configuration: RequestorConfiguration) -> [Action] {
        guard signInLink(provider) != nil else {
            recordCall(.unknownProvider, .status)
            return refuse(id, .noSignIn(provider: provider))
        }
        let signOutOperation = nextOperation(.account)
        let session = providerSession(provider, configuration, signOutOperation)
        let waiting = accountWork[provider]?.calls ?? []
        let hadToken = session.userToken != nil
        let from = accountKind(provider)
        let failed = signOutLocally(provider)
        // The provider hears of it when the user was signed in with it.
        moveAccount(provider, from: from, to: nil, nil, hadToken ? [.providerSignInStatus, .askProvider] : [.providerSignInStatus])
        var actions = signInStatus(provider, false, .cancelledByUser, answering: waiting) + failed
        if hadToken { actions.append(.askProvider(signOutOperation, provider: provider, .signOut, session)) }
        actions += signInStatus(provider, false, nil, answering: [id])
        return actions
    }

    /// Forgets the user token and what the provider verified; credentials kept for good stay, and
    /// requests waiting for a renewal fail.
    private mutating func signOutLocally(_ provider: String) -> [Action] {
        providerAccounts[provider]?.userToken = nil
        providerAccounts[provider]?.renewingUntil = nil
        if providerAccounts[provider]?.isEmpty == true { providerAccounts[provider] = nil }
        forgetVerification(provider)
        return failRenewalWaiters(provider)
    }

    /// Forgets what `provider` verified the user may access (signed out, here or elsewhere).
    private mutating func forgetVerification(_ provider: String) {
        providerViews[provider] = nil
        renewedRecently.remove(provider)
    }

    /// Credentials requests that waited for a new token fail: there is none (`failure` says why).
    private mutating func failRenewalWaiters(
        _ provider: String, _ failure: ProviderFailure = .invalidToken, _ condition: TransitionGuard = .signedOut
    ) -> [Action] {
        var actions: [Action] = []
        while let index = authorizations.firstIndex(where: { $0.phase == .waitingForProvider(provider) && $0.awaitsRenewal }) {
            let request = authorizations.remove(at: index)
            recordAuthorization(from: .waitingForProvider, to: .idle, condition, .tokenRequestFailed)
            actions += request.waiters.map {
                .emit(.tokenRequestFailed(resource: request.resource, errorCode: failure.code, errorDescription: failure.message), answering: [$0])
            }
        }
        return actions
    }

    private mutating func recordAccountStay(_ provider: String, _ condition: TransitionGuard, _ actions: TransitionAction...) {
        guard recordsTransitions else { return }
        let kind = accountKind(provider).rawValue
        record(.accounts, from: kind, to: kind, condition, actions)
    }

    // MARK: - Answers

    /// A provider's answer to an account's sign-in, verification or renewal.
    mutating func accountAnswered(
        _ provider: String, _ work: AccountWork, _ operation: OperationID, _ answer: ProviderAnswer, _ configuration: RequestorConfiguration
    ) -> [Action] {
        switch (work, answer) {
        case (.signingIn(_, let calls), .signedIn(.success(let token))):
            providerAccounts[provider, default: ProviderAccount()].userToken = token
            renewedRecently.remove(provider)
            return verify(provider, calls: calls, .signedIn, configuration)
        case (.signingIn(_, let calls), .signedIn(.failure(let failure))):
            // A failed sign-in changes nothing: signed in before (with the earlier token), still signed in.
            moveAccount(provider, to: nil, .providerFailed, .providerSignInStatus)
            return signInStatus(provider, accountKind(provider) == .signedIn, failure, answering: calls)
                + endRenewalWaits(provider, configuration)
        case (.verifying(_, let calls), .verified(.success(let view))):
            providerViews[provider] = view
            renewedRecently.remove(provider)
            let next = scheduleVerification(provider)
            moveAccount(provider, from: nil, to: nil, .verified, next.isEmpty ? [.providerSignInStatus] : [.providerSignInStatus, .startTimer])
            return signInStatus(provider, true, nil, message: view.message ?? "", answering: calls) + next
                + endRenewalWaits(provider, configuration)
        case (.verifying(_, let calls), .verified(.failure(.invalidToken))):
            return renewOrSignOut(provider, calls: calls, configuration)
        case (.verifying(_, let calls), .verified(.failure(let failure))):
            // Signed in, but what the user may access could not be said: the last view stands.
            let next = scheduleVerification(provider)
            moveAccount(
                provider, from: nil, to: nil, .verificationFailed,
                next.isEmpty ? [.status, .providerSignInStatus] : [.status, .providerSignInStatus, .startTimer])
            let notice = Notice.providerVerificationFailed.report("The provider '\(provider)' could not verify what the user may access (\(failure.description)); its last answer stands.")
            return [.emit(.status(notice), answering: [])] + signInStatus(provider, true, nil, answering: calls)
                + next + endRenewalWaits(provider, configuration)
        case (.renewing(_, let calls), .renewed(.success(let token))):
            providerAccounts[provider, default: ProviderAccount()].userToken = token
            providerAccounts[provider]?.renewingUntil = nil
            renewedRecently.insert(provider)
            var actions = verify(provider, calls: calls, .renewed, configuration)
            actions += resumeAfterRenewal(provider, .renewed, configuration)
            return actions
        case (.renewing(_, let calls), .renewed(.failure(let failure))) where failure.kind == .notSaved:
            // The store refused the renewed token: nothing changed (the old token stays, as the store
            // holds it); what waited for the renewal fails with the store's reason, and the next request
            // renews again.
            moveAccount(provider, to: nil, .notSaved, .providerSignInStatus)
            providerAccounts[provider]?.renewingUntil = nil
            return signInStatus(provider, true, failure, answering: calls) + failRenewalWaiters(provider, failure, .notSaved)
        case (.renewing(_, let calls), .renewed(.failure)):
            let from = accountKind(provider)
            let failed = signOutLocally(provider)
            moveAccount(provider, from: from, to: nil, .providerFailed, .providerSignInStatus)
            return failed + signInStatus(provider, false, .invalidToken, answering: calls)
        default:
            return [.log(.lateResultIgnored(operation))]
        }
    }

    /// A configuration arrived: every provider of the chain is asked what the user may access — one the
    /// user signs in to only with a token here — and `setRequestor` waits for their answers
    /// (``setRequestorWait``). A provider the user signs in to with no account here has no view.
    mutating func verifyAtSetRequestor(_ configuration: RequestorConfiguration) -> [Action] {
        var actions: [Action] = []
        var verifications: Set<OperationID> = []
        for link in settings.providers where !link.isTVProvider {
            if link.signsIn, providerAccounts[link.id]?.userToken == nil {
                if providerAccounts[link.id] == nil { providerViews[link.id] = nil }
                continue
            }
            actions += verify(link.id, calls: [], .verifyingProviders, configuration)
            if let operation = accountWork[link.id]?.operation { verifications.insert(operation) }
        }
        if !verifications.isEmpty { setRequestorWait = SetRequestorWait(verifications: verifications) }
        return actions
    }

    /// Asks `provider` what the user may access now.
    private mutating func verify(
        _ provider: String, calls: [CallID], _ condition: TransitionGuard?, _ configuration: RequestorConfiguration,
        from before: AccountKind? = nil
    ) -> [Action] {
        let operation = nextOperation(.account)
        moveAccount(provider, from: before, to: .verifying(operation, calls: calls), condition, [.askProvider])
        return [.askProvider(operation, provider: provider, .verify, providerSession(provider, configuration, operation))]
    }

    /// The service called the user token invalid: renew it once where the provider can, else sign out locally.
    mutating func renewOrSignOut(_ provider: String, calls: [CallID], _ configuration: RequestorConfiguration) -> [Action] {
        if let until = providerAccounts[provider]?.renewingUntil, until > now {
            // Another instance renews this token: the requests waiting here ask again once the store holds
            // the new one (or renew it themselves if that instance's renewal stops standing). A verification
            // that said so has ended; a sign-in waiting for it waits for the new token too, and is answered
            // once it is verified here — as after a renewal here — rather than renewing it a second time. A
            // renewal that waited for the silent sign-in keeps waiting, now for that instance's.
            let waiting = if case .awaitingRenewal = accountWork[provider] { true } else { !calls.isEmpty }
            moveAccount(provider, from: nil, to: waiting ? .awaitingRenewal(calls: calls) : nil, .renewingElsewhere, [.startTimer])
            return [.startTimer(.renewalElsewhere(provider), at: until)]
        }
        let link = settings.providers.first { $0.id == provider }
        let renews = link?.renewsTokens == true && !renewedRecently.contains(provider) && providerAccounts[provider]?.userToken != nil
        if renews, case .signingIn = self.configuration {
            // A verification at `setRequestor` while the silent sign-in runs: nothing is saved until it ends,
            // and a renewal no other instance could know of would be renewed again there. It waits for the
            // sign-in's end (``renewalsAfterSilentSignIn()``), then renews as after another instance's.
            moveAccount(provider, from: nil, to: .awaitingRenewal(calls: calls), .silentSignInRunning)
            return []
        }
        guard renews else {
            let from = accountKind(provider)
            let failed = signOutLocally(provider)
            moveAccount(provider, from: from, to: nil, .invalidToken, .providerSignInStatus)
            return failed + signInStatus(provider, false, .invalidToken, answering: calls)
        }
        let operation = nextOperation(.account)
        moveAccount(provider, to: .renewing(operation, calls: calls), .invalidToken, .askProvider)
        // Marked in the store (saved before the request goes): the other instances wait for this renewal.
        let until = now.adding(settings.requestTimeout * 2)
        providerAccounts[provider]?.renewingUntil = until
        return [.askProvider(operation, provider: provider, .renew, providerSession(provider, configuration, operation))]
    }

    /// The silent sign-in at `setRequestor` ended (the machine is configured: its saves hold again): each
    /// renewal that waited for it is due now, through the same timer as a renewal waited for elsewhere.
    mutating func renewalsAfterSilentSignIn() -> [Action] {
        var actions: [Action] = []
        for (provider, work) in accountWork.sorted(by: { $0.key < $1.key }) {
            guard case .awaitingRenewal = work else { continue }
            record(.accounts, from: AccountKind.awaitingRenewal.rawValue, to: AccountKind.awaitingRenewal.rawValue, input: .anyInput,
                   .silentSignInEnded, [.startTimer])
            actions.append(.startTimer(.renewalElsewhere(provider), at: now))
        }
        return actions
    }

    /// Another instance's renewal of `provider`'s token stopped standing without the store holding a new
    /// token (that instance died, or its save failed): requests still waiting renew it here.
    mutating func renewalElsewhereEnded(_ provider: String, _ configuration: RequestorConfiguration) -> [Action] {
        if case .awaitingRenewal(let calls) = accountWork[provider] { return renewOrSignOut(provider, calls: calls, configuration) }
        guard accountWork[provider] == nil,
            authorizations.contains(where: { $0.phase == .waitingForProvider(provider) && $0.awaitsRenewal })
        else { return [.log(.lateTimerIgnored(.renewalElsewhere(provider)))] }
        return renewOrSignOut(provider, calls: [], configuration)
    }

    /// The renewal `renewalElsewhereEnded(_:_:)` would start could not be marked in the store: nothing is
    /// renewed (no other instance could know), and what waited for it fails with the store's reason, as a
    /// request whose renewal's mark the store refused does; the account stands as it was.
    mutating func renewalNotMarked(_ provider: String, reason: String) -> [Action] {
        let failure = ProviderFailure.notSaved(reason)
        var actions: [Action] = []
        if case .awaitingRenewal(let calls) = accountWork[provider] {
            moveAccount(provider, to: nil, .notSaved, .providerSignInStatus)
            actions += signInStatus(provider, true, failure, answering: calls)
        }
        actions += failRenewalWaiters(provider, failure, .notSaved)
        return actions.isEmpty ? [.log(.lateTimerIgnored(.renewalElsewhere(provider)))] : actions
    }

    /// After the store's accounts were taken up: requests here waiting for a renewal another instance ran
    /// ask again when the store holds a new token (signed out, the adoption failed them; a renewal that
    /// ended with the old token standing is renewed here when its mark's time is up, by the timer).
    private mutating func followRenewalsElsewhere(_ before: [String: String?], _ configuration: RequestorConfiguration) -> [Action] {
        var actions: [Action] = []
        for (provider, token) in before.sorted(by: { $0.key < $1.key }) where accountWork[provider]?.operation == nil {
            guard let current = providerAccounts[provider]?.userToken, current != token,
                authorizations.contains(where: { $0.phase == .waitingForProvider(provider) && $0.awaitsRenewal })
            else { continue }
            actions += resumeAfterRenewal(provider, .renewedElsewhere, configuration)
        }
        return actions
    }

    /// Credentials requests that waited for the renewal ask again, with the new token.
    private mutating func resumeAfterRenewal(_ provider: String, _ condition: TransitionGuard, _ configuration: RequestorConfiguration)
        -> [Action]
    {
        var actions: [Action] = []
        for index in authorizations.indices where authorizations[index].phase == .waitingForProvider(provider) && authorizations[index].awaitsRenewal {
            authorizations[index].awaitsRenewal = false
            actions += startAsking(at: index, provider, from: .waitingForProvider, condition, configuration)
            if settings.providers.first(where: { $0.id == provider })?.requestsOneAtATime == true { break }
        }
        return actions
    }

    /// The account's work ended without a renewal (a sign-in or a verification was running when a
    /// credentials request was told its token is invalid): with a token now, the requests that waited
    /// ask again with it (the service says once more if it is invalid: then a renewal, once); without
    /// one they fail.
    private mutating func endRenewalWaits(_ provider: String, _ configuration: RequestorConfiguration) -> [Action] {
        guard accountWork[provider] == nil else { return [] }
        return providerAccounts[provider]?.userToken == nil
            ? failRenewalWaiters(provider) : resumeAfterRenewal(provider, .signedIn, configuration)
    }

    // MARK: - Verification on an interval

    /// Starts `provider`'s verification timer when it verifies on an interval.
    func scheduleVerification(_ provider: String) -> [Action] {
        guard let interval = settings.providers.first(where: { $0.id == provider })?.verificationInterval else { return [] }
        return [.startTimer(.providerVerification(provider), at: now.adding(interval))]
    }

    /// The interval is over: verify again, unless something already runs for the account or the user
    /// signed out of it.
    mutating func verificationDue(_ provider: String) -> [Action] {
        let signedOut = settings.providers.contains { $0.id == provider && $0.signsIn } && providerAccounts[provider]?.userToken == nil
        guard case .configured(let configuration) = configuration, accountWork[provider] == nil, !signedOut else {
            return [.log(.lateTimerIgnored(.providerVerification(provider)))]
        }
        return verify(provider, calls: [], .verificationDue, configuration)
    }

    /// A new `setRequestor`: every sign-in, verification or renewal running ends, and the calls that
    /// waited for one are answered (signed in or not as the account is, with the reason it ended).
    mutating func abandonAccountWork() -> [Action] {
        var actions: [Action] = []
        for (provider, work) in accountWork.sorted(by: { $0.key < $1.key }) {
            if case .renewing = work { providerAccounts[provider]?.renewingUntil = nil }
            moveAccount(provider, to: nil, nil, .providerSignInStatus)
            let signedIn = accountKind(provider) == .signedIn
            actions += signInStatus(provider, signedIn, .unknown("The requestor was reconfigured."), answering: work.calls)
        }
        return actions
    }
}

/// A `setRequestor` whose answer waits for what the chain's providers verify at configuration.
package struct SetRequestorWait: Sendable, Hashable {
    /// The verifications asked (one per provider); one that ends, however it ends, is waited for no more.
    var verifications: Set<OperationID>
    /// The `setRequestor` calls to answer (set once the configuration is otherwise complete).
    var calls: [CallID] = []
}

extension EntitlementCall {
    /// Whether the answer depends on what the chain's providers claim (an authorization, a
    /// pre-authorization): such a call waits while an account finds out what a new token grants.
    var dependsOnProviderViews: Bool {
        switch self {
        case .checkAuthorization, .getAuthorization, .checkPreauthorizedResources: true
        default: false
        }
    }
}
