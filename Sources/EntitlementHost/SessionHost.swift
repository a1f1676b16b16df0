import EntitlementEngine
import EntitlementSupport
import Synchronization

/// Many device sessions in one process: an engine per ``SessionKey``, created on first use, put to
/// rest when idle or when too many are resident, and brought back on its next call with nothing a
/// delegate, a monitor or a trace could tell apart from an engine that stayed in memory.
///
/// ```swift
/// let host = SessionHost(backend: v2Client, storage: redisStore, delegate: myDelegate)
/// let key = SessionKey(deviceID: deviceID, requestorID: "my-requestor")
/// let token = try await host.authorize("sports-live", on: key)   // or: try await host.call(.checkAuthentication, on: key)
/// ```
///
/// - Every callback reaches the ``SessionHostDelegate`` with its session's key and the ids of the
///   calls it answers. The host holds the delegate strongly.
/// - A session at rest (`AccessEnabler.rest()`: nothing pending) that had no call for
///   ``SessionHostSettings/idleTimeout`` rests as a value; past ``SessionHostSettings/residentLimit``
///   the least recently used rest first. Sessions with work pending stay resident until it ends.
/// - Each session takes at most ``SessionHostSettings/mailboxLimit`` calls at once; the next is
///   refused with a typed ``SessionHostError`` (and gets no callback).
/// - ``close(_:)`` and ``shutdown(gracePeriod:)`` wait until the sessions' calls are answered (a
///   provider picker left open is cancelled: its login's calls end with `PROVIDER_NOT_SELECTED_ERROR`);
///   tokens and any login waiting for its redirect stay in the token storage.
///
/// Lookups and bookkeeping take one lock, never across an `await`; each engine stays its own actor,
/// so sessions run in parallel. On a store that notifies saves (`TokenSaveNotifying`,
/// such as `InMemoryTokenStorage`), resident engines learn of another node's save at once.
public final class SessionHost: Sendable {
    private let settings: SessionHostSettings
    private let backend: any EntitlementBackend
    private let storage: any TokenStorage
    let clock: any EngineClock
    private let makeEnvironment: @Sendable (SessionKey) -> EngineEnvironment
    private let makeMonitor: @Sendable (SessionKey) -> (any EngineMonitor)?
    private let describeDevice: @Sendable (SessionKey) -> V2DeviceInfo?
    private let delegate: (any SessionHostDelegate)?
    private let metrics: (any EngineMetricsHandler)?
    private let registry = Mutex(SessionRegistry())
    private let sweep = Mutex<ScheduledTimer?>(nil)
    /// The store's save notifications, when it gives them (``TokenSaveNotifying``).
    private let saves = Mutex<SaveObservation?>(nil)
    private let providers: ProviderChain?
    /// One copy of equal engine settings for all the host's sessions.
    private let sharedSettings = SharedSettings()

    /// Creates a host.
    /// - Parameters:
    ///   - settings: idle time, resident limit, mailbox bound, engine settings.
    ///   - backend: the entitlement service every session talks to, a `V2Client` (in tests, one on the
    ///     simulator: `V2Client.simulated(_:)` from EntitlementTesting); its configuration answers are
    ///     shared by the host's sessions unless ``SessionHostSettings/configurationValidity`` is nil.
    ///   - storage: the token storage every session shares (a fleet shares it across nodes).
    ///   - clock: times idleness and runs the idle sweeps; give the clock your environments use.
    ///   - delegate: receives every session's callbacks (held strongly).
    ///   - metrics: receives the host's counters and gauges (``SessionHostStatistics``).
    ///   - environment: each new session's environment (clock, device id, randomness); by default
    ///     the live one for the key's device on the system clock.
    ///   - monitor: each new session's monitor (telemetry, a trace recorder), kept while it rests.
    ///   - device: what each new session's device says of itself (its `X-Device-Info`, as the `V2Client`'s
    ///     `devices` gives it): its engine's tracking data describe that device
    ///     (`EngineSettings.describingDevice(_:)`); nil keeps ``SessionHostSettings/engine``'s fields.
    ///   - providers: the provider chain every session's authorizations go through (`ProviderChain`
    ///     in the engine's docs); its providers serve every device (each request names its session).
    public init(
        settings: SessionHostSettings = SessionHostSettings(), backend: any EntitlementService,
        storage: any TokenStorage = InMemoryTokenStorage(), clock: any EngineClock = SystemClock(),
        delegate: (any SessionHostDelegate)? = nil, metrics: (any EngineMetricsHandler)? = nil,
        environment: @escaping @Sendable (SessionKey) -> EngineEnvironment = { .live(deviceID: $0.deviceID) },
        monitor: @escaping @Sendable (SessionKey) -> (any EngineMonitor)? = { _ in nil },
        device: @escaping @Sendable (SessionKey) -> V2DeviceInfo? = { _ in nil }, providers: ProviderChain? = nil
    ) {
        self.providers = providers
        self.settings = settings
        self.backend =
            settings.configurationValidity.map {
                SharedConfigurationBackend(backend, validity: $0, fetchTimeout: settings.engine.requestTimeout, clock: clock)
            } ?? backend.port.backend
        self.storage = storage
        self.clock = clock
        self.delegate = delegate
        self.metrics = metrics
        self.makeEnvironment = environment
        self.makeMonitor = monitor
        self.describeDevice = device
        scheduleSweep()
        if let notifying = storage as? any TokenSaveNotifying {
            let observation = notifying.observeSaves { [weak self] deviceID, requestorID in
                self?.storageSaved(SessionKey(deviceID: deviceID, requestorID: requestorID))
            }
            saves.withLock { $0 = observation }
        }
    }

    deinit {
        sweep.withLock { $0?.cancel() }
        saves.withLock { $0?.cancel() }
    }

    /// The store saved `key`'s tokens (this node or another): a resident engine reads the version now,
    /// so a login another node finished answers its waiting calls at once. A resting session reads it at
    /// its next call, as always.
    private func storageSaved(_ key: SessionKey) {
        guard let enabler = registry.withLock({ registry in registry.slot(of: key).flatMap { registry[$0].enabler } }) else {
            return
        }
        Task { await enabler.checkStorage() }
    }

    // MARK: - Calls

    /// Makes `call` on the session `key` (creating or resuming it) and returns its id once the engine
    /// accepted it; the answer comes to the delegate.
    @discardableResult
    public func call(_ call: EntitlementCall, on key: SessionKey) async throws(SessionHostError) -> CallID {
        try await withSession(key) { await $0.call(call) }
    }

    /// Makes `call` on the session `key` and returns the callback that answers it (see
    /// `AccessEnabler.answer(to:within:)`); the delegate sees it too. The wait honours task cancellation
    /// and `timeLimit`: either ends it with an `EntitlementFailure` (`CALL_WAIT_CANCELLED`,
    /// `CALL_WAIT_TIMED_OUT`) while the call stays accepted and its answer still reaches the delegate.
    /// Throws ``SessionHostError`` when the host refused the call (no callback follows).
    public func answer(to call: EntitlementCall, on key: SessionKey, within timeLimit: Duration? = nil) async throws -> Callback {
        try await withSession(key) { enabler -> Result<Callback, EntitlementFailure> in
            do throws(EntitlementFailure) {
                return .success(try await enabler.answer(to: call, within: timeLimit))
            } catch {
                return .failure(error)
            }
        }.get()
    }

    /// Makes `call` on the session `key` and returns the first thing the device must do for it to go
    /// on — open a page, choose a provider, show a registration code — or its answer (see
    /// `AccessEnabler.interact(_:within:)`): the one call a request/response backend makes per device
    /// request. The delegate sees every callback too. Throws ``SessionHostError`` when the host refused
    /// the call, and `EntitlementFailure` when the wait was cancelled or passed `timeLimit`.
    public func interact(_ call: EntitlementCall, on key: SessionKey, within timeLimit: Duration? = nil) async throws -> Interaction {
        try await withSession(key) { enabler -> Result<Interaction, EntitlementFailure> in
            do throws(EntitlementFailure) {
                return .success(try await enabler.interact(call, within: timeLimit))
            } catch {
                return .failure(error)
            }
        }.get()
    }

    /// Admits a call into `key`'s session (configuring a new one first), runs `work` on its engine, then
    /// lets go of the session and puts any overflow to rest.
    private func withSession<Result: Sendable>(
        _ key: SessionKey, _ work: (AccessEnabler) async -> Result
    ) async throws(SessionHostError) -> Result {
        let admission = try admit(key)
        if admission.configure { await admission.enabler.setRequestor(key.requestorID) }
        let result = await work(admission.enabler)
        await finish(admission)
        return result
    }

    /// Authorizes `resource` on the session `key` (logging in first if needed) and returns the media
    /// token; a refusal by the host throws ``SessionHostError``, a failed authorization, or a wait that
    /// was cancelled or passed `timeLimit`, throws `EntitlementFailure`.
    public func authorize(_ resource: String, data: [String: String] = [:], on key: SessionKey, within timeLimit: Duration? = nil)
        async throws -> String
    {
        let answer = try await answer(to: .getAuthorization(resource: resource, data: data), on: key, within: timeLimit)
        if case .setToken(let token, _) = answer { return token }
        throw EntitlementFailure(answer)
    }

    // MARK: - Lifecycle

    /// Closes the session `key`: new calls on it are refused while its accepted calls are answered
    /// (each within the engine's own deadlines; a provider picker left open, which has none, is
    /// cancelled with `PROVIDER_NOT_SELECTED_ERROR`), then it leaves the host. Its tokens stay in storage,
    /// so a later call opens it again as it was stored. Returns false when there was no such session.
    @discardableResult
    public func close(_ key: SessionKey) async -> Bool {
        while true {
            let step = registry.withLock { registry -> (found: Bool, waitFor: AccessEnabler?) in
                guard let slot = registry.slot(of: key) else { return (false, nil) }
                registry[slot].closing = true
                if registry[slot].inFlight == 0, let enabler = registry[slot].enabler { return (true, enabler) }
                if registry[slot].inFlight > 0 { return (true, registry[slot].enabler) }
                // Resting with a picker open: its calls wait for the user, so it comes back to answer them.
                if case .resting(let rest) = registry[slot].form, rest.isChoosingProvider { return (true, resume(slot, rest, &registry)) }
                registry.remove(slot)  // resting: nothing runs
                registry.statistics.closed += 1
                return (true, nil)
            }
            guard step.found else { return false }
            guard let enabler = step.waitFor else { break }
            await Self.answerEverything(enabler)
            // At rest with no call admitted (closing admits none): nothing can wake it, so it may go.
            let removed = registry.withLock { registry -> Bool in
                guard let slot = registry.slot(of: key, holding: enabler), registry[slot].inFlight == 0 else { return false }
                registry.remove(slot)
                registry.statistics.closed += 1
                return true
            }
            if removed { break }
            await Task.yield()  // a call admitted before the close has not reached the engine yet
        }
        count("entitle.sessions.closed")
        publishGauges()
        return true
    }

    /// Stops taking calls and waits until every resident session is at rest (every accepted call
    /// answered; a provider picker left open is cancelled with `PROVIDER_NOT_SELECTED_ERROR`), or until
    /// `gracePeriod` passes on the host's clock (or the calling task is cancelled: that ends the grace
    /// period at once). Then every session leaves the host: those at rest are
    /// closed (their tokens stay in storage), and those still busy are closed too
    /// (`AccessEnabler.closeSession()`): each call they had not answered is answered
    /// `status(SESSION_CLOSED)`, so every accepted call has its answer when this returns. A login or logout
    /// a busy session was waiting for stays in the token storage, and the node its redirect reaches
    /// finishes it. ``SessionHostStatistics/closed`` counts them all.
    public func shutdown(gracePeriod: Duration = .seconds(30)) async -> SessionShutdownReport {
        let engines = registry.withLock { registry -> [AccessEnabler] in
            registry.shuttingDown = true
            // Sessions resting with a picker open come back: their calls wait for the user's choice.
            for slot in registry.restingSlots(where: \.isChoosingProvider) {
                if case .resting(let rest) = registry[slot].form { _ = resume(slot, rest, &registry) }
            }
            return registry.residentEngines
        }
        sweep.withLock {
            $0?.cancel()
            $0 = nil
        }
        let settled = await Self.settle(engines, within: gracePeriod, on: clock)
        // Busy sessions are closed now, their waiting calls answered; what they wait for is in storage.
        var busy = 0
        var callsClosed = 0
        var all: Set<ObjectIdentifier> = []
        for engine in engines {
            all.insert(ObjectIdentifier(engine))
            guard await engine.rest() == nil else { continue }
            busy += 1
            callsClosed += await engine.closeSession()
        }
        let closed = registry.withLock { $0.removeAll(restingOr: all) }
        if closed > 0 {
            count("entitle.sessions.closed", by: closed)
            publishGauges()
        }
        return SessionShutdownReport(settled: settled, stillBusy: busy, callsClosed: callsClosed)
    }

    /// Serves until the calling task is cancelled, then shuts down with `gracePeriod`
    /// (``shutdown(gracePeriod:)``, whose grace the cancellation that started it does not cut short) and
    /// returns its report: the shape of a service's `run()` — with swift-service-lifecycle, run it as
    /// `cancelOnGracefulShutdown { await host.run() }` (*Running a fleet* shows the adapter).
    public func run(gracePeriod: Duration = .seconds(30)) async -> SessionShutdownReport {
        while !Task.isCancelled { try? await Task.sleep(for: .seconds(3600)) }
        return await Task { await self.shutdown(gracePeriod: gracePeriod) }.value
    }

    /// Whether the session `key` is in memory as an engine or resting as a value; nil when the host
    /// has no such session.
    public func residency(of key: SessionKey) -> SessionResidency? {
        registry.withLock { registry in
            registry.slot(of: key).map { registry[$0].enabler != nil ? .resident : .resting }
        }
    }

    /// Returns once the session `key` has no request in flight, platform question pending or input
    /// waiting (at once when it rests or does not exist): its answers so far have been delivered.
    public func whenSettled(_ key: SessionKey) async {
        let enabler = registry.withLock { registry in registry.slot(of: key).flatMap { registry[$0].enabler } }
        await enabler?.whenIdle()
    }

    /// The host's counts now.
    public var statistics: SessionHostStatistics { registry.withLock { $0.statistics } }

    /// How many calls the session `key` has admitted and not yet returned (nil: no such session), and
    /// whether it is closing: what a test waits for instead of a pause.
    package func admission(of key: SessionKey) -> (calls: Int, closing: Bool)? {
        registry.withLock { registry in registry.slot(of: key).map { (Int(registry[$0].inFlight), registry[$0].closing) } }
    }

    /// Whether ``shutdown(gracePeriod:)`` has begun.
    var isShuttingDown: Bool { registry.withLock { $0.shuttingDown } }

    // MARK: - Eviction

    /// Puts to rest every resident session that is at rest and had no call for the idle timeout, and
    /// forgets resting sessions that hold nothing past ``SessionHostSettings/forgetEmptySessionsAfter``;
    /// returns how many it put to rest. The host runs this every idle timeout on its clock.
    @discardableResult
    public func evictIdleSessions() async -> Int {
        let now = clock.now()
        let cutoff = now.adding(.zero - settings.idleTimeout)
        let candidates = registry.withLock { $0.candidates(usedBefore: cutoff, limit: .max) }
        let evicted = await putToRest(candidates)
        if let forgetAfter = settings.forgetEmptySessionsAfter {
            let forgotten = registry.withLock { $0.forgetEmpty(usedBefore: now.adding(.zero - forgetAfter)) }
            if forgotten > 0 {
                count("entitle.sessions.forgotten", by: forgotten)
                publishGauges()
            }
            // Many sessions gone at once: the allocator's freed pages go back to the system.
            if forgotten >= Self.forgottenBeforeTrim { FreedMemory.returnToSystem() }
        }
        return evicted
    }

    /// How many sessions one sweep forgets before the host hands the freed memory back to the system.
    static let forgottenBeforeTrim = 1_000

    private func putToRest(_ candidates: [SessionRegistry.Candidate]) async -> Int {
        var evicted = 0
        for candidate in candidates {
            let rest = await candidate.enabler.rest()
            let now = clock.now()
            let done = registry.withLock { registry -> Bool in
                guard let slot = registry.slot(of: candidate.key, holding: candidate.enabler),
                    registry[slot].generation == candidate.generation, registry[slot].inFlight == 0, !registry[slot].closing
                else { return false }
                guard let rest else {
                    // Busy with its own work (a login waiting for its redirect): counts as used now.
                    registry.touch(slot, at: now)
                    return false
                }
                registry.putToRest(slot, rest)
                return true
            }
            if done { evicted += 1 }
        }
        if evicted > 0 {
            count("entitle.sessions.evicted", by: evicted)
            publishGauges()
        }
        return evicted
    }

    private func scheduleSweep() {
        // At least a second apart, so a zero idle time cannot make a manual clock sweep forever.
        let deadline = clock.now().adding(max(settings.idleTimeout, .seconds(1)))
        let timer = clock.schedule(at: deadline) { [weak self] in
            guard let self else { return }
            await self.evictIdleSessions()
            self.scheduleSweep()
        }
        sweep.withLock { current in
            // Shut down meanwhile: no more sweeps.
            if isShuttingDown { timer.cancel() } else { current = timer }
        }
    }

    // MARK: - Admission

    /// A call let into a session: its engine, whether the host must configure it first, and the
    /// engines to put to rest afterwards because the resident limit was passed.
    private struct Admission: Sendable {
        let key: SessionKey
        let enabler: AccessEnabler
        let configure: Bool
        let overflow: [SessionRegistry.Candidate]
    }

    private func admit(_ key: SessionKey) throws(SessionHostError) -> Admission {
        let now = clock.now()
        let result = registry.withLock { registry -> Result<(Admission, created: Bool, resumed: Bool), SessionHostError> in
            if registry.shuttingDown { return refuse(.shuttingDown, &registry) }
            var created = false, resumed = false
            let slot: Int
            if let existing = registry.slot(of: key) {
                slot = existing
                let entry = registry[slot]
                if entry.closing { return refuse(.sessionClosing(key), &registry) }
                if entry.inFlight >= settings.mailboxLimit {
                    return refuse(.mailboxFull(key, limit: settings.mailboxLimit), &registry)
                }
                if case .resting(let rest) = entry.form {
                    _ = resume(slot, rest, &registry)
                    resumed = true
                }
                registry.touch(slot, at: now)
            } else {
                let relay = makeRelay(key)
                let monitor = makeMonitor(key)
                var engine = describeDevice(key).map(settings.engine.describingDevice) ?? settings.engine
                if let redirect = settings.redirect { engine.redirectURL = redirect.url(for: key) }
                let enabler = AccessEnabler(
                    backend: backend, delegate: relay, storage: storage, environment: makeEnvironment(key), settings: engine,
                    monitor: monitor, providers: providers, sharingSettings: sharedSettings)
                slot = registry.insert(
                    SessionRegistry.Entry(key: key, form: .resident(enabler, relay), monitor: monitor, lastUsed: now))
                registry.statistics.created += 1
                created = true
            }
            registry[slot].inFlight += 1
            registry[slot].generation &+= 1
            let excess = registry.statistics.resident - max(0, settings.residentLimit)
            let overflow = excess > 0 ? registry.candidates(usedBefore: now, limit: excess, sparing: slot) : []
            let admission = Admission(
                key: key, enabler: registry[slot].enabler!, configure: created && settings.configuresNewSessions, overflow: overflow)
            return .success((admission, created, resumed))
        }
        switch result {
        case .success(let (admission, created, resumed)):
            if created { count("entitle.sessions.created") }
            if resumed { count("entitle.sessions.resumed") }
            if created || resumed { publishGauges() }
            return admission
        case .failure(let refusal):
            count("entitle.sessions.refused")
            throw refusal
        }
    }

    /// Brings the resting session at `slot` back as an engine (under the registry's lock).
    private func resume(_ slot: Int, _ rest: EngineRest, _ registry: inout SessionRegistry) -> AccessEnabler {
        let relay = makeRelay(registry[slot].key)
        let enabler = AccessEnabler(
            resuming: rest, backend: backend, delegate: relay, storage: storage, monitor: registry[slot].monitor, providers: providers)
        registry.resume(slot, as: enabler, relay)
        return enabler
    }

    /// The relay of a session's callbacks to the host's delegate; with a provider-choice time limit, it
    /// also times each picker the session opens.
    private func makeRelay(_ key: SessionKey) -> SessionRelay {
        guard let limit = settings.providerChoiceTimeout else { return SessionRelay(key: key, delegate: delegate) }
        return SessionRelay(key: key, delegate: delegate) { [weak self] in self?.timeProviderChoice(key, limit) }
    }

    /// A session opened a provider picker: when `limit` passes on the host's clock with that same login
    /// still waiting for the user's choice, the engine stops waiting for it (`abandonProviderChoice(_:)`:
    /// the login's calls end with `PROVIDER_NOT_SELECTED_ERROR`), so no hosted call waits on a user for
    /// ever — and a login the device started through another node meanwhile goes on.
    private func timeProviderChoice(_ key: SessionKey, _ limit: Duration) {
        let opened = registry.withLock { registry in registry.slot(of: key).flatMap { registry[$0].enabler } }
        guard let opened else { return }
        // Timed from the picker's opening, not from when the task below runs (later on a busy machine).
        let deadline = clock.now().adding(limit)
        Task {
            guard let flow = await opened.loginChoosingProvider else { return }
            _ = clock.schedule(at: deadline) { [weak self] in
                guard let self else { return }
                _ = try? await self.withSession(key) { enabler in await enabler.abandonProviderChoice(flow) }
            }
        }
    }

    private func refuse<T>(_ refusal: SessionHostError, _ registry: inout SessionRegistry) -> Result<T, SessionHostError> {
        registry.statistics.refused += 1
        return .failure(refusal)
    }

    /// The call returned from the engine: it no longer holds the session; then the overflow is put to rest.
    private func finish(_ admission: Admission) async {
        registry.withLock { registry in
            if let slot = registry.slot(of: admission.key, holding: admission.enabler) { registry[slot].inFlight -= 1 }
        }
        if !admission.overflow.isEmpty { _ = await putToRest(admission.overflow) }
    }

    // MARK: - Measurements

    private func count(_ label: String, by amount: Int = 1) {
        metrics?.increment(counter: label, dimensions: [], by: Int64(amount))
    }

    private func publishGauges() {
        guard let metrics else { return }
        let statistics = self.statistics
        metrics.record(gauge: "entitle.sessions.resident", dimensions: [], value: Int64(statistics.resident))
        metrics.record(gauge: "entitle.sessions.resting", dimensions: [], value: Int64(statistics.resting))
    }

    /// Returns once every call `engine` accepted is answered: it is at rest, and a provider picker it
    /// left open (which waits for the user without a deadline) is given up (`abandonProviderChoice(_:)`),
    /// answering the login's calls with `PROVIDER_NOT_SELECTED_ERROR` as if the user had closed it —
    /// without ending a login the device started through another node.
    private static func answerEverything(_ engine: AccessEnabler) async {
        while true {
            // Quiet first: a caller awaiting the answer of a call the open picker holds keeps the
            // engine from rest until the picker is cancelled.
            await engine.whenQuiet()
            if await engine.abandonProviderChoice() { continue }
            await engine.whenAtRest()
            if await !engine.abandonProviderChoice() { return }
        }
    }

    /// Waits until each engine is at rest, `gracePeriod` passes on `clock` or the calling task is
    /// cancelled; returns how many came to rest. Engines already at rest are counted first, so they never
    /// race the deadline.
    private static func settle(_ engines: [AccessEnabler], within gracePeriod: Duration, on clock: any EngineClock) async -> Int {
        let deadline = clock.now().adding(gracePeriod)
        var busy: [AccessEnabler] = []
        for engine in engines {
            await engine.abandonProviderChoice()
            if await engine.rest() == nil { busy.append(engine) }
        }
        let resting = engines.count - busy.count
        guard !busy.isEmpty else { return resting }
        let tally = SettleTally(expecting: busy.count)
        let answering = busy.map { engine in
            Task {
                await answerEverything(engine)
                tally.settledOne()
            }
        }
        let timer = clock.schedule(at: deadline) { tally.end() }
        let settled = await withTaskCancellationHandler { await tally.wait() } onCancel: { tally.end() }
        timer.cancel()
        for task in answering { task.cancel() }
        return settled + resting
    }
}
