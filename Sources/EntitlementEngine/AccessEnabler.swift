import EntitlementSupport

/// The entitlement engine for one device session, with the cookbook's API.
///
/// Every public call is turned into an ``Input`` for the pure ``EntitlementMachine`` and the
/// returned ``Action``s are run in order. Results come back through ``AccessEnablerDelegate`` and
/// through any stream made with ``callbacks(bufferLimit:)``. Calls made before `setRequestor` completes are held and run after it.
///
/// Each call returns its ``CallID``; the call is *accepted* when the method returns (its
/// synchronous callbacks have already been delivered); results that need the backend follow.
///
/// ```swift
/// let enabler = AccessEnabler(backend: myBackend, delegate: myDelegate, environment: .live(deviceID: id))
/// await enabler.setRequestor("my-requestor")
/// await enabler.getAuthorization("news-channel")   // → setToken or tokenRequestFailed
/// ```
public actor AccessEnabler {
    /// Options `setOptions` accepts (Adobe's iOS/tvOS SDK API reference).
    public static let knownOptions: Set<String> = ["applicationProfile", "visitorID", "handleSVC", "device_info"]

    /// Why `setOptions` refused its argument.
    public enum OptionsError: Error, Sendable, Equatable {
        /// These keys are not options AccessEnabler knows.
        case unknownKeys([String])
    }

    private var machine: EntitlementMachine
    private let backend: any EntitlementBackend
    /// The providers beside the TV provider, if a chain was given.
    private let providers: ProviderChain?
    private let storage: any TokenStorage
    private let environment: EngineEnvironment
    private let monitor: (any EngineMonitor)?
    private weak var delegate: (any AccessEnablerDelegate)?

    /// Work waiting for the machine, in arrival order: inputs, and configuration answers that
    /// still need the stored tokens read.
    private enum Work {
        case input(Input)
        case configurationAnswered(OperationID, requestorID: String, Result<BackendResponse, BackendError>)
        /// The store says the tokens may have changed: read the version now.
        case storageCheck
    }

    private var mailbox: [(work: Work, ticket: UInt64?)] = []
    private var immediate: [Input] = []
    private var draining = false
    private var lastTicket: UInt64 = 0
    private var lastCallID: UInt64 = 0
    /// The stored version the machine's view of storage corresponds to, for the requestor it
    /// was read or written for; nil until read (a save then reads first).
    private var storeVersion: (requestorID: String, version: StorageVersion)?
    private var timers: [TimerID: ScheduledTimer] = [:]
    /// What the engine waits for from the platform: an open picker (by flow) or a sign-in check
    /// (by operation). Either keeps the engine busy.
    private enum PlatformWork: Hashable {
        case picker(FlowID)
        case signInCheck(OperationID)
    }

    private var platformWork: [PlatformWork: Task<Void, Never>] = [:]
    private let platform: (any PlatformSSO)?
    private var operationsInFlight: Set<OperationID> = []
    /// The operations in flight that ask a provider of the chain (not the backend).
    private var providerOperations: Set<OperationID> = []
    /// Each request in flight: its task and its deadline.
    private var backendRequests: [OperationID: (task: Task<Void, Never>, deadline: ScheduledTimer)] = [:]
    /// Everyone suspended until a condition of the engine holds.
    private var waiters = EngineWaiters()
    private var streams: [UInt64: StreamSink] = [:]
    private var lastStreamID: UInt64 = 0
    /// Calls accepted and not yet answered (answered by a callback naming them, or by ``closeSession()``).
    private var unanswered: Set<CallID> = []
    /// Set by ``closeSession()``: the engine takes no more input and emits nothing more.
    private var closed = false
    /// Calls whose caller awaits their answer (``answer(to:within:)``): the waiting caller, or the answer
    /// when it came before the caller started waiting.
    private var awaitedAnswers: [CallID: AwaitedAnswer] = [:]

    /// One consumer's stream: how to hand it a callback (false when its buffer is full) and end it.
    private struct StreamSink {
        let yield: @Sendable (Callback, [CallID]) -> Bool
        let finish: @Sendable () -> Void
    }

    /// Where an awaited call's answer stands.
    private enum AwaitedAnswer {
        case expected
        case waiting(CheckedContinuation<Result<Callback, EntitlementFailure>, Never>)
        case arrived(Callback)
    }

    /// Creates an engine.
    /// - Parameters:
    ///   - backend: the entitlement service port.
    ///   - delegate: receives callbacks (held weakly, as AccessEnabler does).
    ///   - storage: where tokens live between sessions.
    ///   - environment: clock, device id and random sources.
    ///   - settings: redirect URL, timeouts, queue bound, tracking fields.
    ///   - monitor: observes every boundary event (tests, debug logs).
    ///   - recorder: records the session as a trace; nil (the default) records nothing and costs nothing.
    ///   - platform: the device's TV-provider account (cookbook D); nil when the device has none.
    ///   - providers: the provider chain that answers authorization (``ProviderChain``); nil (the
    ///     default) is the TV provider alone, as in Adobe's SDK.
    public init(
        backend: any EntitlementBackend, delegate: (any AccessEnablerDelegate)? = nil,
        storage: any TokenStorage = InMemoryTokenStorage(), environment: EngineEnvironment,
        settings: EngineSettings = EngineSettings(), monitor: (any EngineMonitor)? = nil,
        recorder: TraceRecorder? = nil, platform: (any PlatformSSO)? = nil, providers: ProviderChain? = nil
    ) {
        let observers: [any EngineMonitor] = [monitor, recorder].compactMap { $0 }
        let combined: (any EngineMonitor)? = observers.count > 1 ? MonitorGroup(observers) : observers.first
        var settings = settings
        settings.platformSSO = platform != nil
        settings.providers = providers?.descriptions ?? []
        self.providers = providers
        self.platform = platform
        self.machine = EntitlementMachine(settings: settings, deviceID: environment.deviceID)
        self.machine.recordsTransitions = combined != nil
        self.backend = backend
        self.delegate = delegate
        self.storage = storage
        self.environment = environment
        self.monitor = combined
        combined?.observe(.started(machine.settings, deviceID: environment.deviceID, at: environment.clock.now()))
    }

    /// Resumes an engine from ``rest()``: the same machine, call ids and environment, with this
    /// backend, delegate, storage and monitor. Nothing is emitted or observed on resuming (no
    /// `started` event: a monitor or trace recorder that watched the engine before it rested sees one
    /// continuous session).
    public init(
        resuming rest: EngineRest, backend: any EntitlementBackend, delegate: (any AccessEnablerDelegate)? = nil,
        storage: any TokenStorage = InMemoryTokenStorage(), monitor: (any EngineMonitor)? = nil,
        platform: (any PlatformSSO)? = nil, providers: ProviderChain? = nil
    ) {
        self.providers = providers
        self.platform = platform
        self.machine = rest.parts.machine.resumed()
        self.machine.recordsTransitions = monitor != nil
        self.lastCallID = rest.parts.lastCallID
        self.storeVersion = rest.parts.storeVersion
        self.backend = backend
        self.delegate = delegate
        self.storage = storage
        self.environment = rest.parts.environment
        self.monitor = monitor
    }

    deinit {
        for stream in streams.values { stream.finish() }
        for timer in timers.values { timer.cancel() }
        for task in platformWork.values { task.cancel() }
        for request in backendRequests.values {
            request.task.cancel()
            request.deadline.cancel()
        }
    }

    // MARK: - Public API (cookbook calls)

    /// Replaces the delegate (held weakly).
    public func setDelegate(_ delegate: (any AccessEnablerDelegate)?) { self.delegate = delegate }

    /// Sets the requestor and loads its configuration → `setRequestorComplete`. Calling it again reconfigures.
    @discardableResult
    public func setRequestor(_ requestorID: String, serviceProviders: [String] = []) async -> CallID {
        await submit(.setRequestor(requestorID: requestorID, serviceProviders: serviceProviders))
    }

    /// Sets the options sent with every backend request; unknown keys are refused and nothing changes.
    public func setOptions(_ options: [String: String]) async throws(OptionsError) {
        let unknown = options.keys.filter { !Self.knownOptions.contains($0) }.sorted()
        guard unknown.isEmpty else { throw .unknownKeys(unknown) }
        await enqueueAndWait(.input(.optionsChanged(options)))
    }

    /// Answers from local state only → `setAuthenticationStatus`.
    @discardableResult
    public func checkAuthentication() async -> CallID { await submit(.checkAuthentication) }

    /// Runs the login flow if needed → `setAuthenticationStatus` (after `displayProviderDialog` /
    /// `navigateToUrl`). A second call while a login runs joins it.
    @discardableResult
    public func getAuthentication(forceAuthn: Bool = false, data: [String: String] = [:]) async -> CallID {
        await submit(.getAuthentication(forceAuthn: forceAuthn, data: data))
    }

    /// Chooses the MVPD for the login (→ `navigateToUrl`), or cancels with nil
    /// (→ `setAuthenticationStatus(0, PROVIDER_NOT_SELECTED_ERROR)`).
    @discardableResult
    public func setSelectedProvider(_ mvpdID: String?) async -> CallID { await submit(.setSelectedProvider(mvpdID)) }

    /// Completes a login or logout with the final redirect URL, after checking it; a refused URL
    /// is answered by `status` and changes nothing.
    @discardableResult
    public func handleExternalURL(_ url: String) async -> CallID { await submit(.handleExternalURL(url)) }

    /// → `selectedProvider`.
    @discardableResult
    public func getSelectedProvider() async -> CallID { await submit(.getSelectedProvider) }

    /// Authorizes without any UI → `setToken` or `tokenRequestFailed`.
    @discardableResult
    public func checkAuthorization(_ resource: String, data: [String: String] = [:]) async -> CallID {
        await submit(.checkAuthorization(resource: resource, data: data))
    }

    /// Authorizes, running the login first if needed → `setToken` or `tokenRequestFailed`.
    @discardableResult
    public func getAuthorization(_ resource: String, data: [String: String] = [:]) async -> CallID {
        await submit(.getAuthorization(resource: resource, data: data))
    }

    /// → `preauthorizedResources` with the authorized subset.
    @discardableResult
    public func checkPreauthorizedResources(_ resources: [String], cache: Bool = true) async -> CallID {
        await submit(.checkPreauthorizedResources(resources, cache: cache))
    }

    /// → `setMetadataStatus`.
    @discardableResult
    public func getMetadata(_ key: MetadataKey) async -> CallID { await submit(.getMetadata(key)) }

    /// Clears local tokens, then `navigateToUrl` with the logout URL; the logout redirect completes it.
    @discardableResult
    public func logout() async -> CallID { await submit(.logout) }

    /// Signs in to a provider of the chain that takes credentials (a direct subscription) → one
    /// `providerSignInStatus`. The credentials go to the provider once and are never stored, logged or traced.
    @discardableResult
    public func signIn(provider: String, credentials: [String: String]) async -> CallID {
        await submit(.signIn(provider: provider, credentials: credentials))
    }

    /// Signs out of that provider → one `providerSignInStatus` (signed in 0); what it granted for good stays.
    @discardableResult
    public func signOut(provider: String) async -> CallID { await submit(.signOut(provider: provider)) }

    /// Reports the step-up `stepUpRequired` asked for: on success the authorization is retried once
    /// (with the transaction id); this call is answered with it (`setToken` or `tokenRequestFailed`).
    @discardableResult
    public func completeStepUp(_ resource: String, succeeded: Bool) async -> CallID {
        await submit(.completeStepUp(resource: resource, succeeded: succeeded))
    }

    /// Another writer may have changed this session's stored tokens (a store that notifies,
    /// ``TokenSaveNotifying``, says so): the engine reads the stored version now, in turn with its
    /// other work, and the tokens only if the version changed — as it does before every input, so a
    /// login another node finished answers this engine's waiting calls at once rather than at its next
    /// input. Not a call: nothing is answered unless the stored change ends a flow.
    public func storageChanged() async { await enqueueAndWait(.storageCheck) }

    /// Makes any call given as a value (scripts, explorers, tools): the same as the named method.
    @discardableResult
    public func call(_ call: EntitlementCall) async -> CallID { await submit(call) }

    // MARK: - Async results

    /// Makes `call` and returns the callback that answers it — its terminal callback, or the
    /// `status` that refused it — once it arrives (for `getAuthorization`, after any login it runs).
    /// The delegate and the streams see the same callbacks as for the named call.
    ///
    /// The wait honours task cancellation and `timeLimit` (on the engine's clock; nil waits as long as
    /// the call's flow runs, which its own deadlines bound): either ends the *wait* at once with an
    /// ``EntitlementFailure`` (``ErrorCode/callWaitCancelled`` or ``ErrorCode/callWaitTimedOut``, no
    /// callback). The call itself stays accepted, the engine's state is unchanged, and its terminal
    /// callback still reaches the delegate and the streams, exactly once. A task cancelled before the
    /// call makes no call at all.
    public func answer(to call: EntitlementCall, within timeLimit: Duration? = nil) async throws(EntitlementFailure) -> Callback {
        guard !Task.isCancelled else { throw EntitlementFailure(waitEnded: ErrorCode.callWaitCancelled) }
        let id = await submit(call, awaitingAnswer: true)
        if case .arrived(let callback)? = awaitedAnswers[id] {
            awaitedAnswers[id] = nil
            resumeIdleWaitersIfIdle()
            return callback
        }
        let deadline = timeLimit.map { limit in
            environment.clock.schedule(at: environment.clock.now().adding(limit)) { [weak self] in
                await self?.endWait(id, ErrorCode.callWaitTimedOut)
            }
        }
        defer { deadline?.cancel() }
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { awaitedAnswers[id] = .waiting($0) }
        } onCancel: {
            Task { await self.endWait(id, ErrorCode.callWaitCancelled) }
        }
        return try result.get()
    }

    /// Ends the wait for `id`'s answer, if its caller still waits: the call stays accepted and is answered
    /// through the delegate and the streams as usual.
    private func endWait(_ id: CallID, _ code: String) {
        guard case .waiting(let caller)? = awaitedAnswers[id] else { return }
        awaitedAnswers[id] = nil
        caller.resume(returning: .failure(EntitlementFailure(waitEnded: code)))
        resumeIdleWaitersIfIdle()
    }

    /// Authorizes `resource` (logging in first if needed, as `getAuthorization` does) and returns the
    /// media token, or throws the failure that `tokenRequestFailed` or a refusal reported — or that the
    /// wait ended first (cancelled, or past `timeLimit`: see ``answer(to:within:)``).
    public func authorize(_ resource: String, data: [String: String] = [:], within timeLimit: Duration? = nil) async throws(EntitlementFailure)
        -> String
    {
        let answer = try await answer(to: .getAuthorization(resource: resource, data: data), within: timeLimit)
        if case .setToken(let token, _) = answer { return token }
        throw EntitlementFailure(answer)
    }

    /// Makes sure the user is authenticated (running the login if needed, as `getAuthentication`
    /// does); throws the failure `setAuthenticationStatus(0, code)` or a refusal reported — or that the
    /// wait ended first (cancelled, or past `timeLimit`: see ``answer(to:within:)``).
    public func authenticate(forceAuthn: Bool = false, data: [String: String] = [:], within timeLimit: Duration? = nil)
        async throws(EntitlementFailure)
    {
        let answer = try await answer(to: .getAuthentication(forceAuthn: forceAuthn, data: data), within: timeLimit)
        if case .setAuthenticationStatus(1, _) = answer { return }
        throw EntitlementFailure(answer)
    }

    // MARK: - Callback streams

    /// A new stream of every callback emitted from now on, in order. Each call makes its own
    /// stream, so several consumers can listen; an engine nobody streams from buffers nothing.
    /// The stream ends when the engine is released or the consumer stops iterating.
    ///
    /// Buffering is bounded: a consumer that falls `bufferLimit` callbacks behind (10,000 by
    /// default, at least 1) is cut off — it still receives everything up to that point, then its
    /// stream ends — rather than silently losing callbacks or letting memory grow without bound.
    public func callbacks(bufferLimit: Int = 10_000) -> AsyncStream<Callback> {
        stream(bufferLimit) { callback, _ in callback }
    }

    /// Like ``callbacks(bufferLimit:)``, with the ids of the calls each callback answers (none for a
    /// callback that answers no call, such as `navigateToUrl` or tracking data): a consumer that
    /// made several calls knows which one each answer is for.
    public func answeredCallbacks(bufferLimit: Int = 10_000) -> AsyncStream<AnsweredCallback> {
        stream(bufferLimit) { callback, answering in AnsweredCallback(callback: callback, answering: answering) }
    }

    private func stream<Element: Sendable>(_ bufferLimit: Int, _ make: @escaping @Sendable (Callback, [CallID]) -> Element)
        -> AsyncStream<Element>
    {
        lastStreamID += 1
        let id = lastStreamID
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        continuation.onTermination = { [weak self] _ in Task { await self?.removeStream(id) } }
        streams[id] = StreamSink(
            yield: { callback, answering in
                if case .dropped = continuation.yield(make(callback, answering)) { return false }
                return true
            },
            finish: { continuation.finish() })
        return stream
    }

    private func removeStream(_ id: UInt64) { streams[id] = nil }

    // MARK: - Closing

    /// The `status` that answers every call still waiting when the engine is closed.
    static let sessionClosedReport = Notice.sessionClosed.report("The session was closed before this call was answered; make it again (on any node: what is stored carries over).")

    /// Ends this engine now, for an owner that must let it go (a host shutting down past its grace
    /// period): every call still unanswered is answered with one `status(SESSION_CLOSED)` (to the
    /// delegate, the streams and awaiting callers), its timers, requests and platform questions are
    /// cancelled, and it emits, saves and reads nothing more — a later call is answered
    /// `SESSION_CLOSED` at once. The store keeps what it holds: a login or logout waiting for its
    /// redirect there is finished by whichever instance the redirect reaches. Monitors see a log line,
    /// not the callback (the machine did not make it, so a trace still replays). Returns how many calls
    /// it answered.
    @discardableResult
    public func closeSession() -> Int {
        guard !closed else { return 0 }
        closed = true
        for timer in timers.values { timer.cancel() }
        timers.removeAll()
        for task in platformWork.values { task.cancel() }
        platformWork.removeAll()
        for request in backendRequests.values {
            request.task.cancel()
            request.deadline.cancel()
        }
        backendRequests.removeAll()
        operationsInFlight.removeAll()
        providerOperations.removeAll()
        immediate.removeAll()
        mailbox.removeAll()
        waiters.resume { if case .ticketRun = $0 { true } else { false } }
        let calls = unanswered.sorted()
        monitor?.observe(.log(.sessionClosed(answered: calls.count)))
        if !calls.isEmpty { emit(.status(Self.sessionClosedReport), answering: calls, closing: true) }
        waiters.resume { if case .finished = $0 { true } else { $0 == .providersAnswered } }
        resumeIdleWaitersIfIdle()
        return calls.count
    }

    /// Whether ``closeSession()`` ended this engine.
    public var isClosed: Bool { closed }

    // MARK: - Rest

    /// The engine as a value, when it is at rest: nothing queued or running, no backend request,
    /// platform question or timer pending (a login waiting for its redirect is not at rest; one waiting
    /// for the user to pick a provider is, and its rest keeps it), no caller awaiting an answer and no
    /// stream open. Nil otherwise. The engine stays usable either way; an owner that keeps the rest and
    /// drops the engine (``AccessEnabler/init(resuming:backend:delegate:storage:monitor:platform:providers:)``
    /// brings it back) must send it nothing in between.
    public func rest() -> EngineRest? {
        guard isAtRest, streams.isEmpty else { return nil }
        return EngineRest(
            parts: EngineRest.Parts(machine: machine.resting(), lastCallID: lastCallID, storeVersion: storeVersion, environment: environment))
    }

    /// Returns once the engine is at rest as ``rest()`` means it (streams aside): every call answered,
    /// every request, platform question and timer done. A login waiting for its redirect ends by its
    /// deadline, so this always returns, at the latest when the engine's own deadlines pass — or at once
    /// when the calling task is cancelled.
    public func whenAtRest() async {
        guard !isAtRest else { return }
        await wait(for: .atRest)
    }

    private var isAtRest: Bool { isQuiet && awaitedAnswers.isEmpty }

    /// At rest but for callers still waiting for answers (``answer(to:within:)``): nothing runs, so what a
    /// waiting call needs is the user's — a provider picker left open.
    private var isQuiet: Bool {
        !draining && mailbox.isEmpty && immediate.isEmpty && operationsInFlight.isEmpty && backendRequests.isEmpty
            && platformWork.isEmpty && timers.isEmpty
    }

    /// Returns once nothing runs (``whenAtRest()`` but for callers still waiting for an answer): a
    /// session host that closes a session waits for this, then cancels an open picker.
    package func whenQuiet() async {
        guard !isQuiet else { return }
        await wait(for: .quiet)
    }

    // MARK: - Inspection (for the package's test drivers: the simulator's sessions, the host, the explorer)

    /// The machine as it is now.
    package var machineSnapshot: EntitlementMachine { machine }

    /// Returns once no backend request is in flight, no question to the platform (picker or sign-in
    /// check) is pending and no input is waiting — or when the calling task is cancelled.
    public func whenIdle() async {
        guard !operationsInFlight.isEmpty || !platformWork.isEmpty || draining else { return }
        await wait(for: .idle)
    }

    /// Returns once no platform picker is open (answered, or dismissed by the engine), no platform
    /// sign-in check is running, and their answers have been handled.
    package func whenPlatformAnswered() async {
        guard !platformWork.isEmpty || draining else { return }
        await wait(for: .platformAnswered)
    }

    /// The backend requests sent and not yet answered.
    package var backendOperationsInFlight: Set<OperationID> { operationsInFlight.subtracting(providerOperations) }

    /// The operations in flight that ask a provider of the chain.
    package var providerOperationsInFlight: Set<OperationID> { providerOperations }

    /// Returns once no provider of the chain is asked for anything.
    package func whenProvidersAnswered() async {
        guard !providerOperations.isEmpty else { return }
        await wait(for: .providersAnswered)
    }

    /// Returns once the answer to `operation` has been fed to the machine and its actions run
    /// (at once if it is not in flight).
    package func whenFinished(_ operation: OperationID) async {
        guard operationsInFlight.contains(operation) else { return }
        await wait(for: .finished(operation))
    }

    // MARK: - Run to completion

    /// How often one input is decided again after losing a compare-and-set to another writer
    /// before its save counts as failed.
    static let conflictRetries = 8

    /// The pauses between attempts at a save that failed for a passing reason: 50 ms, doubling up to
    /// 1 s, while the next pause still ends within the window (real time: the store is a real server).
    struct StorageRetry {
        private let deadline: ContinuousClock.Instant
        private var pause = Duration.milliseconds(50)

        init(window: Duration) { deadline = ContinuousClock.now + window }

        /// Whether another attempt fits in the window.
        var mayPause: Bool { ContinuousClock.now + pause <= deadline }

        /// The next pause (each twice the last, at most 1 s).
        mutating func nextPause() -> Duration {
            defer { pause = min(pause * 2, .seconds(1)) }
            return pause
        }
    }

    private func submit(_ call: EntitlementCall, awaitingAnswer: Bool = false) async -> CallID {
        lastCallID += 1
        let id = CallID(lastCallID)
        if awaitingAnswer { awaitedAnswers[id] = .expected }
        guard !closed else {
            emit(.status(Self.sessionClosedReport), answering: [id], closing: true)
            return id
        }
        unanswered.insert(id)
        monitor?.observe(.callReceived(id, call))
        await enqueueAndWait(.input(.callReceived(id, call)))
        return id
    }

    /// Queues `work` and returns once the machine has handled it and its actions ran (so the
    /// call's synchronous callbacks were delivered).
    private func enqueueAndWait(_ work: Work) async {
        guard !closed else { return }
        lastTicket += 1
        let ticket = lastTicket
        mailbox.append((work, ticket))
        guard draining else { return await drain() }
        // Not cancellable: the call is queued, and its caller learns its id once it has run.
        await withCheckedContinuation { waiters.add(.ticketRun(ticket), id: waiters.nextID(), $0) }
    }

    /// Runs the mailbox to empty, one input at a time; a drain already running keeps the work
    /// (a call made from a callback is queued behind the current step, never nested in it).
    /// Storage is awaited inside a step: whatever arrives meanwhile waits in the mailbox.
    private func drain() async {
        guard !draining else { return }
        draining = true
        while !closed {
            if !immediate.isEmpty {
                await process(immediate.removeFirst())
            } else if !mailbox.isEmpty {
                let (work, ticket) = mailbox.removeFirst()
                switch work {
                case .input(let input):
                    await reconcileWithStorage()
                    await process(input)
                case .configurationAnswered(let operation, let requestorID, let result):
                    await configurationAnswered(operation, requestorID: requestorID, result)
                case .storageCheck:
                    await reconcileWithStorage()
                }
                while !immediate.isEmpty { await process(immediate.removeFirst()) }
                if let ticket { waiters.resume(.ticketRun(ticket)) }
            } else {
                break
            }
        }
        draining = false
        resumeIdleWaitersIfIdle()
    }

    /// Feeds one input to the machine and runs its actions. When the input asks for a save, the
    /// save (a compare-and-set) runs first, before any other action, and the step is committed
    /// only after it: if another writer got there first, the step is dropped and — unless the
    /// input came from reading storage itself (`retryingConflicts` false; the next input reads
    /// again) — decided again on what storage now holds; a save that failed for a passing reason is
    /// decided and tried again after a pause, within ``EngineSettings/storageRetryWindow``. If the save
    /// still fails, the step of a call or a backend answer is dropped and the machine told instead
    /// (``input(insteadOf:notSaved:)``); any other step is taken in memory and the machine told
    /// (``Input/storageWriteFailed(_:)``).
    private func process(_ input: Input, retryingConflicts: Bool = true) async {
        var conflicts = 0
        var retry = StorageRetry(window: machine.settings.storageRetryWindow)
        while true {
            let now = environment.clock.now()
            var next = machine
            let actions = next.handle(input, at: now)
            var failure: TokenStorageError?
            if case .persist(let tokens, let requestorID)? = actions.first {
                do throws(TokenStorageError) {
                    try await save(tokens, requestorID: requestorID)
                } catch .conflict where !retryingConflicts {
                    return
                } catch .conflict where conflicts < Self.conflictRetries {
                    conflicts += 1
                    await reconcileWithStorage(force: true)
                    continue
                } catch where error.isTransient && retry.mayPause {
                    // The store is away for a moment (restarting, failing over, busy): decide and save
                    // again shortly; nothing of this step is told before its save holds. (A write the
                    // store made although its answer was lost comes back as a conflict, handled above.)
                    let pause = retry.nextPause()
                    monitor?.observe(.storageFailed("\(error.description) (trying again in \(pause))"))
                    try? await Task.sleep(for: pause)
                    continue
                } catch {
                    failure = error
                }
            }
            guard !closed else { return }  // closed while the save ran: nothing more happens here
            if let failure, let instead = Self.input(insteadOf: input, notSaved: failure) {
                // The step is not taken: nothing it would tell the device holds anywhere but here.
                monitor?.observe(.storageFailed(failure.description))
                await process(instead, retryingConflicts: retryingConflicts)
                return
            }
            machine = next
            monitor?.observe(.inputHandled(input, at: now))
            if let monitor {
                for row in machine.lastTransitions { monitor.observe(.transition(row)) }
            }
            for action in actions { run(action) }
            if let failure {
                monitor?.observe(.storageFailed(failure.description))
                immediate.insert(.storageWriteFailed(failure.description), at: 0)
            }
            return
        }
    }

    /// What the machine is told instead of an input whose step could not be saved: a call is refused
    /// (``Input/callNotSaved(_:_:reason:)``), a backend answer counts as a failed request
    /// (``BackendError/storageUnavailable(_:)``), so no instance tells the device what the store does not
    /// hold. Nil for `setRequestor` (it always completes) and every other input: those steps are taken
    /// in memory and saved again after the next input.
    static func input(insteadOf input: Input, notSaved error: TokenStorageError) -> Input? {
        switch input {
        case .callReceived(_, .setRequestor): nil
        case .callReceived(let id, let call): .callNotSaved(id, call, reason: error.description)
        case .backendAnswered(let operation, _):
            .backendFailed(operation, .storageUnavailable(Redactor.redact(String(error.description.prefix(200)))))
        default: nil
        }
    }

    // MARK: - Storage

    /// Saves with a compare-and-set against the version the machine's view came from.
    private func save(_ tokens: StoredTokens, requestorID: String) async throws(TokenStorageError) {
        guard let known = storeVersion, known.requestorID == requestorID else {
            // Never read for this requestor: whatever is stored must be read before it is replaced.
            throw .conflict(current: try await storage.version(deviceID: environment.deviceID, requestorID: requestorID))
        }
        let version = try await storage.save(
            tokens, deviceID: environment.deviceID, requestorID: requestorID, replacing: known.version)
        storeVersion = (requestorID, version)
    }

    /// Before every input (and after a lost compare-and-set): when the stored version is not the
    /// one the machine's view came from, reads the tokens and, when they differ, feeds
    /// ``Input/storageChanged(_:)`` (another instance logged in or out, started or took a login).
    private func reconcileWithStorage(force: Bool = false) async {
        guard case .configured(let configuration) = machine.configuration else { return }
        let requestorID = configuration.requestorID
        do throws(TokenStorageError) {
            if !force, let known = storeVersion, known.requestorID == requestorID {
                let version = try await storage.version(deviceID: environment.deviceID, requestorID: requestorID)
                guard version != known.version else { return }
            }
            let current = try await storage.load(deviceID: environment.deviceID, requestorID: requestorID)
            storeVersion = (requestorID, current.version)
            guard machine.differs(from: current.tokens) else { return }
            await process(.storageChanged(current.tokens), retryingConflicts: false)
        } catch {
            monitor?.observe(.storageFailed(error.description))
        }
    }

    /// A configuration answer: reads the stored tokens (and other requestors' logins on this
    /// device) for the machine, unless the answer is late.
    private func configurationAnswered(
        _ operation: OperationID, requestorID: String, _ result: Result<BackendResponse, BackendError>
    ) async {
        switch result {
        case .success(.configuration(let answer)) where answer.requestorID == requestorID:
            let configuration = SharedConfigurations.share(RequestorConfiguration(answer))
            var stored = StoredTokens.empty
            var others: [AuthenticationToken] = []
            if case .configuring(_, let current, _) = machine.configuration, current == operation {
                do throws(TokenStorageError) {
                    let loaded = try await storage.load(deviceID: environment.deviceID, requestorID: requestorID)
                    stored = loaded.tokens
                    storeVersion = (requestorID, loaded.version)
                } catch {
                    storeVersion = nil
                    monitor?.observe(.storageFailed(error.description))
                }
                others = await othersStored(requestorID)
            }
            let verified = await verifyProviders(
                ProviderSession.of(deviceID: environment.deviceID, requestorID: requestorID, configuration: operation),
                accounts: stored.providerAccounts)
            await process(.configurationLoaded(operation, configuration, stored, others: others, verified: verified))
        case .success:
            await process(.configurationFailed(operation, .malformedResponse("not a configuration for '\(requestorID)'")))
        case .failure(let error):
            await process(.configurationFailed(operation, error))
        }
    }

    /// What other requestors stored on this device (for single sign-on); a storage that cannot say finds none.
    private func othersStored(_ requestorID: String) async -> [AuthenticationToken] {
        do throws(TokenStorageError) {
            return try await storage.authentications(deviceID: environment.deviceID).filter { $0.requestorID != requestorID }
        } catch {
            monitor?.observe(.storageFailed(error.description))
            return []
        }
    }

    // MARK: - Providers

    /// Every provider of the chain verifies what the user may access, side by side, each within the
    /// request deadline (past it: ``ProviderFailure/networkFailure``).
    private func verifyProviders(_ session: ProviderSession, accounts: [String: ProviderAccount]) async
        -> [String: Result<ProviderView, ProviderFailure>]
    {
        guard let providers else { return [:] }
        let deadline = machine.settings.requestTimeout
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

    /// `work`'s result, or `timedOut` when the engine's clock passes `limit` first (the work is then cancelled).
    private static func withinDeadline<Value: Sendable>(
        _ limit: Duration, on clock: any EngineClock, timedOut: Value, _ work: @escaping @Sendable () async -> Value
    ) async -> Value {
        let first = FirstResult<Value>()
        let task = Task { first.offer(await work()) }
        let timer = clock.schedule(at: clock.now().adding(limit)) { first.offer(timedOut) }
        let value = await first.value()
        task.cancel()
        timer.cancel()
        return value
    }

    /// Asks a provider as a task whose answer (or deadline) comes back as an input.
    private func startProviderTask(_ operation: OperationID, provider id: String, _ request: ProviderRequest, _ session: ProviderSession) {
        monitor?.observe(.providerAsked(operation, provider: id, request))
        operationsInFlight.insert(operation)
        providerOperations.insert(operation)
        let provider = providers?.provider(id)
        let task = Task {
            let answer: ProviderAnswer
            if let provider {
                answer = await Self.ask(provider, request, session)
            } else {
                answer = Self.timedOut(request, .unknown("no provider '\(id)' in the chain"))
            }
            await self.providerFinished(operation, answer)
        }
        let deadline = environment.clock.now().adding(machine.settings.requestTimeout)
        let timer = environment.clock.schedule(at: deadline) { [weak self] in
            await self?.providerFinished(operation, Self.timedOut(request, .networkFailure), cancellingRequest: true)
        }
        backendRequests[operation] = (task, timer)
    }

    private static func ask(_ provider: any EntitlementProvider, _ request: ProviderRequest, _ session: ProviderSession) async
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

    /// The answer a request gets when its provider fails it (past the deadline, or missing).
    private static func timedOut(_ request: ProviderRequest, _ failure: ProviderFailure) -> ProviderAnswer {
        switch request {
        case .credentials: .credentials(.failure(failure))
        case .verify: .verified(.failure(failure))
        case .signIn: .signedIn(.failure(failure))
        case .renew: .renewed(.failure(failure))
        case .signOut: .signedOut
        }
    }

    /// The first result of a provider request (its answer, or its deadline) goes to the machine.
    private func providerFinished(_ operation: OperationID, _ result: ProviderAnswer, cancellingRequest: Bool = false) async {
        guard let running = backendRequests.removeValue(forKey: operation) else { return }
        running.deadline.cancel()
        if cancellingRequest { running.task.cancel() }
        defer { operationFinished(operation) }
        await enqueueAndWait(.input(.providerAnswered(operation, result)))
    }

    private func run(_ action: Action) {
        guard !closed else { return }
        switch action {
        case .emit(let callback, let answering):
            monitor?.observe(.callbackEmitted(callback, answering: answering))
            emit(callback, answering: answering)
        case .loadConfiguration(let operation, let request), .callBackend(let operation, let request):
            startBackendTask(operation, request)
        case .askProvider(let operation, let provider, let request, let session):
            startProviderTask(operation, provider: provider, request, session)
        case .resubmit(let held):
            let resubmitted: [(work: Work, ticket: UInt64?)] = held.map { (.input(.callReceived($0.id, $0.call)), nil) }
            mailbox.insert(contentsOf: resubmitted, at: 0)
        case .drawFlowSecrets(let flow):
            let state = Base64URL.encode(environment.redirectStateRandom.bytes(32))
            immediate.append(.flowSecretsDrawn(flow, FlowSecrets(state: state)))
        case .startTimer(let timer, let deadline):
            timers.removeValue(forKey: timer)?.cancel()
            timers[timer] = environment.clock.schedule(at: deadline) { [weak self] in await self?.timerFired(timer) }
        case .cancelTimer(let timer):
            timers.removeValue(forKey: timer)?.cancel()
        case .persist:
            break  // saved by ``process(_:)`` before any other action ran
        case .presentPlatformPicker(let flow, let dialog, let requestorID, let request):
            startPickerTask(flow, dialog, requestorID: requestorID, request: request)
        case .dismissPlatformPicker(let flow):
            platformWork.removeValue(forKey: .picker(flow))?.cancel()
        case .checkPlatformSignIn(let operation, let requestorID, let mvpdIDs, let request):
            startPlatformTask(.signInCheck(operation)) { platform in
                .platformSignInChecked(
                    operation, await platform?.signedInAssertion(requestorID: requestorID, mvpdIDs: mvpdIDs, request: request))
            }
        case .log(let log):
            monitor?.observe(.log(log))
        }
    }

    /// Hands a callback to whoever waits for it: the callers awaiting the calls it answers, the streams
    /// and the delegate.
    private func emit(_ callback: Callback, answering: [CallID], closing: Bool = false) {
        guard !closed || closing else { return }
        if !answering.isEmpty { for id in answering { unanswered.remove(id) } }
        if !awaitedAnswers.isEmpty {
            for id in answering {
                switch awaitedAnswers[id] {
                case .expected?: awaitedAnswers[id] = .arrived(callback)
                case .waiting(let caller)?:
                    awaitedAnswers[id] = nil
                    caller.resume(returning: .success(callback))
                case .arrived?, nil: break
                }
            }
        }
        for (id, stream) in streams where !stream.yield(callback, answering) {
            // The consumer fell a whole buffer behind: end its stream (documented in `callbacks`).
            stream.finish()
            streams[id] = nil
        }
        delegate?.callbackEmitted(callback, answering: answering)
    }

    // MARK: - Platform picker

    private func startPickerTask(_ flow: FlowID, _ dialog: TvProviderDialog, requestorID: String, request: V2PartnerRequest) {
        startPlatformTask(.picker(flow)) { platform in
            // The machine only asks when a port was given; without one the picker counts as cancelled.
            .platformPickerAnswered(
                flow, await platform?.pickProvider(dialog, requestorID: requestorID, request: request) ?? .cancelled)
        }
    }

    /// Runs one question to the platform as a task whose answer comes back as an input.
    private func startPlatformTask(
        _ work: PlatformWork, _ ask: @escaping @Sendable ((any PlatformSSO)?) async -> Input
    ) {
        let platform = self.platform
        platformWork[work] = Task {
            let answer = await ask(platform)
            await self.platformAnswered(work, answer)
        }
    }

    private func platformAnswered(_ work: PlatformWork, _ answer: Input) async {
        // A dismissed picker's answer is dropped here: the machine already ended its flow.
        guard platformWork.removeValue(forKey: work) != nil else { return }
        await enqueueAndWait(.input(answer))
        resumeIdleWaitersIfIdle()
    }

    // MARK: - Backend and timers

    /// Sends `request` with a deadline (``EngineSettings/requestTimeout``): whichever comes first,
    /// the answer or the deadline, is the request's one result; the other is dropped.
    private func startBackendTask(_ operation: OperationID, _ request: BackendRequest) {
        monitor?.observe(.backendRequested(operation, request))
        operationsInFlight.insert(operation)
        let backend = self.backend
        let task = Task {
            let result: Result<BackendResponse, BackendError>
            do throws(BackendError) {
                result = .success(try await backend.perform(request, operation: operation))
            } catch {
                result = .failure(error)
            }
            await self.backendAnswered(operation, request, result)
        }
        let deadline = environment.clock.now().adding(machine.settings.requestTimeout)
        let timer = environment.clock.schedule(at: deadline) { [weak self] in
            await self?.backendAnswered(operation, request, .failure(.timeout), cancellingRequest: true)
        }
        backendRequests[operation] = (task, timer)
    }

    /// The first result of a request (its answer, or its deadline) goes to the machine; a second is dropped.
    private func backendAnswered(
        _ operation: OperationID, _ request: BackendRequest, _ result: Result<BackendResponse, BackendError>,
        cancellingRequest: Bool = false
    ) async {
        guard let running = backendRequests.removeValue(forKey: operation) else { return }
        running.deadline.cancel()
        if cancellingRequest { running.task.cancel() }
        await backendFinished(operation, request, result)
    }

    private func backendFinished(
        _ operation: OperationID, _ request: BackendRequest, _ result: Result<BackendResponse, BackendError>
    ) async {
        defer { operationFinished(operation) }
        monitor?.observe(.backendFinished(operation, result))
        let work: Work
        if case .configuration(let context) = request {
            work = .configurationAnswered(operation, requestorID: context.requestorID, result)
        } else {
            switch result {
            case .success(let response): work = .input(.backendAnswered(operation, response))
            case .failure(let error): work = .input(.backendFailed(operation, error))
            }
        }
        await enqueueAndWait(work)
    }

    private func timerFired(_ timer: TimerID) async {
        timers[timer] = nil
        await enqueueAndWait(.input(.timerFired(timer)))
    }

    /// Marks `operation` done once its answer has been processed, and wakes whoever waits for it.
    private func operationFinished(_ operation: OperationID) {
        operationsInFlight.remove(operation)
        if providerOperations.remove(operation) != nil, providerOperations.isEmpty { waiters.resume(.providersAnswered) }
        waiters.resume(.finished(operation))
        resumeIdleWaitersIfIdle()
    }

    /// Resumes the waits whose condition now holds: the platform answered, quiet, at rest, idle.
    private func resumeIdleWaitersIfIdle() {
        if waiters.isWaiting(for: .platformAnswered), platformWork.isEmpty, !draining { waiters.resume(.platformAnswered) }
        if waiters.isWaiting(for: .quiet), isQuiet { waiters.resume(.quiet) }
        if waiters.isWaiting(for: .atRest), isAtRest { waiters.resume(.atRest) }
        if waiters.isWaiting(for: .idle), operationsInFlight.isEmpty, platformWork.isEmpty, !draining { waiters.resume(.idle) }
    }

    /// Suspends until the engine resumes `condition`'s waiters (when it holds, or the engine closes) or
    /// the calling task is cancelled.
    private func wait(for condition: EngineCondition) async {
        let id = waiters.nextID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                waiters.add(condition, id: id, continuation)
                if Task.isCancelled { waiters.resume(id: id) }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    private func stopWaiting(_ id: UInt64) { waiters.resume(id: id) }
}
