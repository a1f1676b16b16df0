/// The provider chain (Pugpig's `KGAuthorisation` providers beside the TV provider): which link
/// answers for a resource, credentials requests (one at a time where a provider needs it), the views
/// providers verified, and the entitlements region that says when what the user may access changed.
extension EntitlementMachine {
    // MARK: - Which link answers

    /// Whether a chain is configured (without one the TV provider answers alone, as Adobe's SDK does).
    var hasProviderChain: Bool { !settings.providers.isEmpty }

    /// Whether `link` claims `resource` now: the TV provider while the user is signed in with an
    /// MVPD, another provider when its last verified view lists the resource.
    func claims(_ link: ProviderLink, _ resource: String) -> Bool {
        if link.isTVProvider {
            if case .authenticated = authentication { return true }
            return false
        }
        return providerViews[link.id]?.claims(resource) ?? false || providerAccounts[link.id]?.kept[resource] != nil
    }

    /// The link that answers an authorization of `resource`: the first that claims it, else the last
    /// (the chain's fallback). Nil without a chain.
    func answeringLink(for resource: String) -> ProviderLink? {
        let links = settings.providers
        return links.first { claims($0, resource) } ?? links.last
    }

    /// For `checkPreauthorizedResources`: the resources a provider other than the TV provider
    /// answers for locally (claimed → authorized), and those nobody claims (not authorized); the
    /// TV provider's are left out, for the backend to decide.
    func decidedByProviders(_ resources: [String]) -> [String: Bool] {
        guard hasProviderChain else { return [:] }
        var decided: [String: Bool] = [:]
        for resource in resources {
            switch settings.providers.first(where: { claims($0, resource) }) {
            case let link? where !link.isTVProvider: decided[resource] = true
            case nil: decided[resource] = false
            default: break
            }
        }
        return decided
    }

    // MARK: - Credentials

    /// An authorization a provider answers: asked now, or held while the provider's running request ends.
    mutating func askProvider(
        _ id: CallID, _ link: ProviderLink, resource: String, data: [String: String], _ configuration: RequestorConfiguration
    ) -> [Action] {
        if let kept = providerAccounts[link.id]?.kept[resource] {
            // Kept for good (a lapsed subscriber keeps what was granted): no request.
            recordAuthorization(from: .idle, to: .idle, .keptCredentials, .setToken)
            return [.emit(.setToken(token: kept, resource: resource), answering: [id])]
        }
        authorizations.append(AuthorizationRequest(resource: resource, data: data, waiters: [id], phase: .waitingForProvider(link.id)))
        if link.requestsOneAtATime, isAsking(link.id) {
            recordAuthorization(from: .idle, to: .waitingForProvider, .providerBusy)
            return []
        }
        return startAsking(at: authorizations.count - 1, link.id, from: .idle, .providerClaims, configuration)
    }

    private func isAsking(_ provider: String) -> Bool {
        authorizations.contains { request in
            if case .askingProvider(provider, _) = request.phase { return true }
            return false
        }
    }

    mutating func startAsking(
        at index: Int, _ provider: String, from: AuthorizationRequest.Kind, _ condition: TransitionGuard?,
        _ configuration: RequestorConfiguration, also extra: TransitionAction? = nil
    ) -> [Action] {
        if let extra {
            recordAuthorization(from: from, to: .askingProvider, condition, extra, .askProvider)
        } else {
            recordAuthorization(from: from, to: .askingProvider, condition, .askProvider)
        }
        let operation = nextOperation(.authorization)
        authorizations[index].phase = .askingProvider(provider, operation)
        var session = providerSession(provider, configuration, operation)
        session.transactionID = authorizations[index].transactionID
        authorizations[index].askedWith = session.userToken
        return [.askProvider(operation, provider: provider, .credentials(resource: authorizations[index].resource), session)]
    }

    /// A provider answered: a credentials request, or an account's sign-in, verification or renewal.
    mutating func providerAnswered(_ operation: OperationID, _ answer: ProviderAnswer) -> [Action] {
        // A sign-out's answer changes nothing (best effort); any other the region no longer waits for is late.
        let late: [Action] = answer == .signedOut ? [] : [.log(.lateResultIgnored(operation))]
        let loaded: RequestorConfiguration
        switch configuration {
        case .configured(let current):
            loaded = current
        case .signingIn(let current, _, _) where operation.owner == .account:
            // The configuration's verification answers while the silent sign-in runs (a renewal it finds
            // due waits for the sign-in's end: ``renewalsAfterSilentSignIn()``).
            loaded = current
        default:
            return late
        }
        switch (operation.owner, answer) {
        case (.authorization, .credentials(let result)):
            guard let index = authorizations.firstIndex(where: { $0.operation == operation }) else { return late }
            return credentialsAnswered(index, result, loaded)
        case (.account, _):
            guard let (provider, work) = accountWork.first(where: { $0.value.operation == operation }) else { return late }
            return accountAnswered(provider, work, operation, answer, loaded)
        default:
            return late
        }
    }

    /// A credentials answer ends its request (every waiter gets its own callback); the provider's next
    /// held request starts. An invalid token holds the request for a renewal, once.
    private mutating func credentialsAnswered(
        _ index: Int, _ result: Result<ProviderCredentials, ProviderFailure>, _ configuration: RequestorConfiguration
    ) -> [Action] {
        guard case .askingProvider(let provider, let operation) = authorizations[index].phase else { return [] }
        if case .failure(let failure) = result, failure.kind == .stepUpRequired, let advice = failure.advice, !authorizations[index].steppedUp,
            let stepUp = settings.stepUp, stepUp.resources.contains(authorizations[index].resource)
        {
            // Policy advice: the app steps up (a PIN, a stronger sign-in), then the request is retried once.
            return adviseStepUp(at: index, provider, advice, answered: operation, until: now.adding(stepUp.timeout))
        }
        // (Signed out since it asked: nothing to renew, the request fails as any other.)
        if case .failure(.invalidToken) = result, settings.providers.contains(where: { $0.id == provider && $0.signsIn }),
            let current = providerAccounts[provider]?.userToken
        {
            if let used = authorizations[index].askedWith, used != current {
                // Renewed elsewhere since this request was sent: asked again with the token the store holds.
                return startAsking(at: index, provider, from: .askingProvider, .renewedElsewhere, configuration)
            }
            recordAuthorization(from: .askingProvider, to: .waitingForProvider, .invalidToken)
            authorizations[index].phase = .waitingForProvider(provider)
            authorizations[index].awaitsRenewal = true
            if accountWork[provider] != nil { return [] }  // a renewal or verification runs: it resumes the request
            return renewOrSignOut(provider, calls: [], configuration)
        }
        let request = authorizations.remove(at: index)
        var actions: [Action]
        switch result {
        case .success(let credentials):
            recordAuthorization(from: .askingProvider, to: .idle, .credentialsGiven, .setToken)
            renewedRecently.remove(provider)
            if credentials.keep { providerAccounts[provider, default: ProviderAccount()].kept[request.resource] = credentials.token }
            actions = request.waiters.map {
                .emit(.setToken(token: credentials.token, resource: request.resource), answering: [$0])
            }
        case .failure(let failure):
            recordAuthorization(from: .askingProvider, to: .idle, .providerFailed, .tokenRequestFailed)
            actions = request.waiters.map {
                .emit(
                    .tokenRequestFailed(resource: request.resource, errorCode: failure.code, errorDescription: failure.message),
                    answering: [$0])
            }
        }
        if let next = authorizations.firstIndex(where: { $0.phase == .waitingForProvider(provider) && !$0.awaitsRenewal }) {
            actions += startAsking(at: next, provider, from: .waitingForProvider, nil, configuration)
        }
        return actions
    }

    // MARK: - Entitlements region

    /// What the user may access, as far as the chain can say without a request: who is signed in
    /// with the TV provider, and each provider's view (views that grant nothing and say nothing left out).
    struct Entitlements: Sendable, Equatable {
        var tvProvider: String?
        var views: [String: ProviderView] = [:]

        /// Nothing accessible: what the app assumes before the engine says otherwise.
        static let none = Entitlements(tvProvider: nil)
    }

    var entitlements: Entitlements {
        var signedIn: String?
        if case .authenticated(let token) = authentication { signedIn = token.mvpdID + "/" + token.userID }
        return Entitlements(tvProvider: signedIn, views: providerViews.filter { $0.value != .nothing })
    }

    /// `entitlementsChanged` naming the links whose part of ``entitlements`` differs from what the app
    /// was last told, or nothing when none does. Judged only while configured: a reconfiguration
    /// forgets the sign-in until the configuration reloads, which is no change to announce.
    mutating func announceEntitlements() -> Action? {
        guard case .configured = configuration, setRequestorWait == nil else { return nil }
        let current = entitlements
        let before = announcedEntitlements
        guard current != before else { return nil }
        announcedEntitlements = current
        let changed = settings.providers.map(\.id).filter { id in
            id == ProviderLink.tvProviderID ? before.tvProvider != current.tvProvider : before.views[id] != current.views[id]
        }
        record(
            .entitlements, from: EntitlementsWatch.watching.rawValue, to: EntitlementsWatch.watching.rawValue,
            input: .anyInput, .changed, [.entitlementsChanged])
        return .emit(.entitlementsChanged(changed), answering: [])
    }
}
