import EntitlementEngine

/// The providers of a chain made to answer in a fixed order, as ``SteppedBackend`` does for the
/// backend: every request (by its `ProviderSession.requestID`; 0, a verification at `setRequestor`,
/// passes at once) waits until ``SimulatedSession/settle()`` lets it through, lowest first, each
/// answer processed before the next. Scenario runs and recordings then give the same trace every time.
/// Requests to a ``hold(_:)``-ed provider stay parked until ``releaseHeld(_:)`` (or, one at a time,
/// ``releaseNext(_:)``): an answer arriving late.
///
/// As in ``SteppedBackend``, a parked request ignores its task's cancellation: one the engine gave up
/// on still reaches its provider when let through, and the engine drops the answer; it ends when
/// ``SimulatedSession/settle()`` lets it through.
package actor SteppedProviders: Watching {
    private var parked: [UInt64: (provider: String, resume: CheckedContinuation<Void, Never>)] = [:]
    /// Tasks waiting for requests to park (``whenParked(_:)``).
    var watchers = Watchers<Set<UInt64>>()
    private var held: Set<String> = []
    /// Parked requests of held providers let through one by one.
    private var passing: Set<UInt64> = []

    /// A gate with nothing parked.
    package init() {}

    /// `chain` with every provider behind this gate.
    package nonisolated func wrapping(_ chain: ProviderChain) -> ProviderChain {
        let links: [ProviderChain.Link] = chain.links.map { link in
            switch link {
            case .tvProvider: .tvProvider
            case .provider(let provider): .provider(SteppedProvider(inner: provider, gate: self))
            }
        }
        return (try? ProviderChain(links)) ?? chain
    }

    /// Waits until request `id` is let through.
    func pass(_ id: UInt64, to provider: String) async {
        guard id != 0 else { return }
        await withCheckedContinuation { continuation in
            parked[id] = (provider, continuation)
            watchers.resume { $0.isSubset(of: parked.keys) }
        }
    }

    /// Returns once every request in `requests` waits here, or when the calling task is cancelled.
    package func whenParked(_ requests: Set<UInt64>) async {
        guard !requests.isSubset(of: parked.keys) else { return }
        await watch(for: requests)
    }

    /// The lowest request waiting that is not held, if any.
    package func next() -> UInt64? { parked.filter { !isHeld($0.key, $0.value.provider) }.keys.min() }

    /// Lets request `id` through.
    package func release(_ id: UInt64) {
        passing.remove(id)
        parked.removeValue(forKey: id)?.resume.resume()
    }

    private func isHeld(_ request: UInt64, _ provider: String) -> Bool {
        held.contains(provider) && !passing.contains(request)
    }

    /// Keeps requests to provider `id` parked until ``releaseHeld(_:)``.
    package func hold(_ id: String) { held.insert(id) }

    /// Lets requests to provider `id` through again (the next settle delivers what waited).
    package func releaseHeld(_ id: String) { held.remove(id) }

    /// Lets the oldest held request to provider `id` through, and goes on holding the others (and
    /// new ones); false when none is held.
    package func releaseNext(_ id: String) -> Bool {
        guard let request = heldRequests().first(where: { $0.provider == id })?.request else { return false }
        passing.insert(request)
        return true
    }

    /// The requests parked and held, lowest first, with the provider each asks.
    package func heldRequests() -> [(request: UInt64, provider: String)] {
        parked.filter { isHeld($0.key, $0.value.provider) }.sorted { $0.key < $1.key }.map { ($0.key, $0.value.provider) }
    }
}

/// One provider behind a `SteppedProviders` gate.
struct SteppedProvider: EntitlementProvider {
    let inner: any EntitlementProvider
    let gate: SteppedProviders

    var id: String { inner.id }
    var requestsOneAtATime: Bool { inner.requestsOneAtATime }
    var signsIn: Bool { inner.signsIn }
    var renewsTokens: Bool { inner.renewsTokens }
    var verificationInterval: Duration? { inner.verificationInterval }

    func verify(_ session: ProviderSession) async -> Result<ProviderView, ProviderFailure> {
        await gate.pass(session.requestID, to: inner.id)
        return await inner.verify(session)
    }

    func credentials(for resource: String, _ session: ProviderSession) async -> Result<ProviderCredentials, ProviderFailure> {
        await gate.pass(session.requestID, to: inner.id)
        return await inner.credentials(for: resource, session)
    }

    func signIn(with credentials: [String: String], _ session: ProviderSession) async -> Result<String, ProviderFailure> {
        await gate.pass(session.requestID, to: inner.id)
        return await inner.signIn(with: credentials, session)
    }

    func renew(_ session: ProviderSession) async -> Result<String, ProviderFailure> {
        await gate.pass(session.requestID, to: inner.id)
        return await inner.renew(session)
    }

    func signOut(_ session: ProviderSession) async {
        await gate.pass(session.requestID, to: inner.id)
        await inner.signOut(session)
    }
}
