/// The provider chain: verifications at configuration, and questions to a provider within their deadline.
extension AccessEnabler {
    /// Every provider of the chain verifies what the user may access, side by side, each within the
    /// request deadline (past it: ``ProviderFailure/networkFailure``).
    func verifyProviders(_ session: ProviderSession, accounts: [String: ProviderAccount]) async
        -> [String: Result<ProviderView, ProviderFailure>]
    {
        guard let providers else { return [:] }
        let deadline = state.machine.settings.requestTimeout
        let clock = environment.clock
        return await withTaskGroup(of: (String, Result<ProviderView, ProviderFailure>).self) { group in
            for case .provider(let provider) in providers.links {
                var session = session
                session.userToken = accounts[provider.id]?.userToken
                // A provider the user signs in to says nothing without a token.
                if provider.signsIn, session.userToken == nil { continue }
                group.addTask { [session] in
                    (provider.id, await Self.withinDeadline(deadline, on: clock, timedOut: .failure(.networkFailure)) {
                        await provider.verify(session)
                    })
                }
            }
            var verified: [String: Result<ProviderView, ProviderFailure>] = [:]
            for await (id, result) in group { verified[id] = result }
            return verified
        }
    }

    /// `work`'s result, or `timedOut` when the engine's clock passes `limit` first or the calling task is
    /// cancelled (the work is then cancelled).
    private static func withinDeadline<Value: Sendable>(
        _ limit: Duration, on clock: any EngineClock, timedOut: Value, _ work: @escaping @Sendable () async -> Value
    ) async -> Value {
        let first = FirstResult<Value>()
        let task = Task { first.offer(await work()) }
        let timer = clock.schedule(at: clock.now().adding(limit)) { first.offer(timedOut) }
        let value = await first.value(orIfCancelled: timedOut)
        task.cancel()
        timer.cancel()
        return value
    }

    /// Asks a provider as a task whose answer comes back as an input (its deadline is the machine's timer).
    func startProviderTask(_ operation: OperationID, provider id: String, _ request: ProviderRequest, _ session: ProviderSession) {
        monitor?.observe(.providerAsked(operation, provider: id, request))
        state.operationsInFlight.insert(operation)
        state.providerOperations.insert(operation)
        let provider = providers?.provider(id)
        let task = Task(executorPreference: environment.taskExecutor) {
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
