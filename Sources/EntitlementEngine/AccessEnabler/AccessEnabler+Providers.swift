/// The provider chain: questions to a provider, each answered as an input (its deadline is the machine's timer).
extension AccessEnabler {
    /// Asks a provider as a task whose answer comes back as an input (its deadline is the machine's timer).
    func startProviderTask(_ operation: OperationID, provider id: String, _ request: ProviderRequest, _ session: ProviderSession) {
        monitor?.observe(.providerAsked(operation, provider: id, request))
        state.operationsInFlight.insert(operation)
        state.providerOperations.insert(operation)
        let provider = providers?.provider(id)
        let task = environment.startTask {
            let answer: ProviderAnswer
            if let provider {
                answer = await Self.ask(provider, request, session)
            } else {
                answer = .failed(request, .unknown("no provider '\(id)' in the chain"))
            }
            await self.providerFinished(operation, answer)
        }
        state.backendRequests[operation] = task
    }

    static func ask(_ provider: any EntitlementProvider, _ request: ProviderRequest, _ session: ProviderSession) async
        -> ProviderAnswer
    {
        switch request {
        case .credentials(let resource): return .credentials(await provider.credentials(for: resource, session))
        case .verify: return .verified(await provider.verify(session))
        case .signIn(let credentials): return .signedIn(await provider.signIn(with: credentials, session))
        case .renew: return .renewed(await provider.renew(session))
        case .signOut:
            await provider.signOut(session)
            return .signedOut
        }
    }

    /// A provider's answer goes to the machine, unless the request was stopped at its deadline.
    private func providerFinished(_ operation: OperationID, _ result: ProviderAnswer) async {
        guard state.backendRequests.removeValue(forKey: operation) != nil else { return }
        defer { operationFinished(operation) }
        await enqueueAndWait(.input(.providerAnswered(operation, result)))
    }
}
