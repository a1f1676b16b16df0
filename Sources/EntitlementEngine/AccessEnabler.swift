/// The entitlement engine for one device session, with the cookbook's API.
///
/// Every public call is turned into an ``Input`` for the pure ``EntitlementMachine`` and the
/// returned ``Action``s are run in order. Results come back through ``AccessEnablerDelegate`` and
/// through any stream made with ``callbacks()``. Calls made before `setRequestor` completes are held and run after it.
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
    /// Options `setOptions` accepts (reference §1.1).
    public static let knownOptions: Set<String> = ["applicationProfile", "visitorID", "handleSVC", "device_info"]

    /// Why `setOptions` refused its argument.
    public enum OptionsError: Error, Sendable, Equatable {
        /// These keys are not options AccessEnabler knows.
        case unknownKeys([String])
    }

    private var machine: EntitlementMachine
    private let backend: any EntitlementBackend
    private let storage: any TokenStorage
    private let environment: EngineEnvironment
    private let monitor: (any EngineMonitor)?
    private weak var delegate: (any AccessEnablerDelegate)?

    private var mailbox: [Input] = []
    private var immediate: [Input] = []
    private var draining = false
    private var lastCallID: UInt64 = 0
    private var timers: [TimerID: ScheduledTimer] = [:]
    /// What the engine waits for from the platform: an open picker (by flow) or a sign-in check
    /// (by operation). Either keeps the engine busy.
    private enum PlatformWork: Hashable {
        case picker(FlowID)
        case signInCheck(OperationID)
    }

    private var platformWork: [PlatformWork: Task<Void, Never>] = [:]
    private var platformWaiters: [CheckedContinuation<Void, Never>] = []
    private let platform: (any PlatformSSO)?
    private var operationsInFlight: Set<OperationID> = []
    private var finishWaiters: [(operation: OperationID, resume: CheckedContinuation<Void, Never>)] = []
    private var idleWaiters: [CheckedContinuation<Void, Never>] = []
    private var streams: [UInt64: AsyncStream<Callback>.Continuation] = [:]
    private var lastStreamID: UInt64 = 0

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
    public init(
        backend: any EntitlementBackend, delegate: (any AccessEnablerDelegate)? = nil,
        storage: any TokenStorage = InMemoryTokenStorage(), environment: EngineEnvironment,
        settings: EngineSettings = EngineSettings(), monitor: (any EngineMonitor)? = nil,
        recorder: TraceRecorder? = nil, platform: (any PlatformSSO)? = nil
    ) {
        let observers: [any EngineMonitor] = [monitor, recorder].compactMap { $0 }
        let combined: (any EngineMonitor)? = observers.count > 1 ? MonitorGroup(observers) : observers.first
        var settings = settings
        settings.platformSSO = platform != nil
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

    deinit {
        for stream in streams.values { stream.finish() }
        for timer in timers.values { timer.cancel() }
        for task in platformWork.values { task.cancel() }
    }

    // MARK: - Public API (cookbook calls)

    /// Replaces the delegate (held weakly).
    public func setDelegate(_ delegate: (any AccessEnablerDelegate)?) { self.delegate = delegate }

    /// Sets the requestor and loads its configuration → `setRequestorComplete`. Calling it again reconfigures.
    @discardableResult
    public func setRequestor(_ requestorID: String, serviceProviders: [String] = []) -> CallID {
        submit(.setRequestor(requestorID: requestorID, serviceProviders: serviceProviders))
    }

    /// Sets the options sent with every backend request; unknown keys are refused and nothing changes.
    public func setOptions(_ options: [String: String]) throws(OptionsError) {
        let unknown = options.keys.filter { !Self.knownOptions.contains($0) }.sorted()
        guard unknown.isEmpty else { throw .unknownKeys(unknown) }
        enqueue(.optionsChanged(options))
    }

    /// Answers from local state only → `setAuthenticationStatus`.
    @discardableResult
    public func checkAuthentication() -> CallID { submit(.checkAuthentication) }

    /// Runs the login flow if needed → `setAuthenticationStatus` (after `displayProviderDialog` /
    /// `navigateToUrl`). A second call while a login runs joins it.
    @discardableResult
    public func getAuthentication(forceAuthn: Bool = false, data: [String: String] = [:]) -> CallID {
        submit(.getAuthentication(forceAuthn: forceAuthn, data: data))
    }

    /// Chooses the MVPD for the login (→ `navigateToUrl`), or cancels with nil
    /// (→ `setAuthenticationStatus(0, PROVIDER_NOT_SELECTED_ERROR)`).
    @discardableResult
    public func setSelectedProvider(_ mvpdID: String?) -> CallID { submit(.setSelectedProvider(mvpdID)) }

    /// Completes a login or logout with the final redirect URL, after checking it; a refused URL
    /// is answered by `status` and changes nothing.
    @discardableResult
    public func handleExternalURL(_ url: String) -> CallID { submit(.handleExternalURL(url)) }

    /// → `selectedProvider`.
    @discardableResult
    public func getSelectedProvider() -> CallID { submit(.getSelectedProvider) }

    /// Authorizes without any UI → `setToken` or `tokenRequestFailed`.
    @discardableResult
    public func checkAuthorization(_ resource: String, data: [String: String] = [:]) -> CallID {
        submit(.checkAuthorization(resource: resource, data: data))
    }

    /// Authorizes, running the login first if needed → `setToken` or `tokenRequestFailed`.
    @discardableResult
    public func getAuthorization(_ resource: String, data: [String: String] = [:]) -> CallID {
        submit(.getAuthorization(resource: resource, data: data))
    }

    /// → `preauthorizedResources` with the authorized subset.
    @discardableResult
    public func checkPreauthorizedResources(_ resources: [String], cache: Bool = true) -> CallID {
        submit(.checkPreauthorizedResources(resources, cache: cache))
    }

    /// → `setMetadataStatus`.
    @discardableResult
    public func getMetadata(_ key: MetadataKey) -> CallID { submit(.getMetadata(key)) }

    /// Clears local tokens, then `navigateToUrl` with the logout URL; the logout redirect completes it.
    @discardableResult
    public func logout() -> CallID { submit(.logout) }

    // MARK: - Callback streams

    /// A new stream of every callback emitted from now on, in order. Each call makes its own
    /// stream, so several consumers can listen; an engine nobody streams from buffers nothing.
    /// The stream ends when the engine is released or the consumer stops iterating.
    public func callbacks() -> AsyncStream<Callback> {
        lastStreamID += 1
        let id = lastStreamID
        let (stream, continuation) = AsyncStream.makeStream(of: Callback.self, bufferingPolicy: .unbounded)
        continuation.onTermination = { [weak self] _ in Task { await self?.removeStream(id) } }
        streams[id] = continuation
        return stream
    }

    private func removeStream(_ id: UInt64) { streams[id] = nil }

    // MARK: - Inspection

    /// The machine as it is now (for tests and debugging).
    public var machineSnapshot: EntitlementMachine { machine }

    /// Returns once no backend request is in flight, no question to the platform (picker or sign-in
    /// check) is pending and no input is waiting.
    public func whenIdle() async {
        guard !operationsInFlight.isEmpty || !platformWork.isEmpty || draining else { return }
        await withCheckedContinuation { idleWaiters.append($0) }
    }

    /// Returns once no platform picker is open (answered, or dismissed by the engine), no platform
    /// sign-in check is running, and their answers have been handled.
    public func whenPlatformAnswered() async {
        guard !platformWork.isEmpty || draining else { return }
        await withCheckedContinuation { platformWaiters.append($0) }
    }

    /// The backend requests sent and not yet answered.
    public var backendOperationsInFlight: Set<OperationID> { operationsInFlight }

    /// Returns once the answer to `operation` has been fed to the machine and its actions run
    /// (at once if it is not in flight).
    public func whenFinished(_ operation: OperationID) async {
        guard operationsInFlight.contains(operation) else { return }
        await withCheckedContinuation { finishWaiters.append((operation, $0)) }
    }

    // MARK: - Run to completion

    private func submit(_ call: EntitlementCall) -> CallID {
        lastCallID += 1
        let id = CallID(lastCallID)
        monitor?.observe(.callReceived(id, call))
        enqueue(.callReceived(id, call))
        return id
    }

    /// Appends to the mailbox; drains it unless a drain is already running (a re-entrant call
    /// from a delegate is therefore queued behind the current step, never nested in it).
    private func enqueue(_ input: Input) {
        mailbox.append(input)
        guard !draining else { return }
        draining = true
        while true {
            if !immediate.isEmpty {
                process(immediate.removeFirst())
            } else if !mailbox.isEmpty {
                let next = mailbox.removeFirst()
                if let change = storageChange() { process(change) }
                process(next)
            } else {
                break
            }
        }
        draining = false
        resumeIdleWaitersIfIdle()
    }

    /// Feeds one input to the machine and runs its actions.
    private func process(_ input: Input) {
        let now = environment.clock.now()
        monitor?.observe(.inputHandled(input, at: now))
        let actions = machine.handle(input, at: now)
        if let monitor {
            for row in machine.lastTransitions { monitor.observe(.transition(row)) }
        }
        for action in actions { run(action) }
    }

    /// ``Input/storageChanged(_:)`` when shared storage holds another authentication or pending
    /// login than the machine last saved (another instance acted); checked before every input.
    private func storageChange() -> Input? {
        guard case .configured(let configuration) = machine.configuration else { return nil }
        do {
            let stored = try storage.load(deviceID: environment.deviceID, requestorID: configuration.requestorID)
            return machine.differs(from: stored) ? .storageChanged(stored) : nil
        } catch {
            monitor?.observe(.storageFailed(String(describing: error)))
            return nil
        }
    }

    private func run(_ action: Action) {
        switch action {
        case .emit(let callback, let answering):
            monitor?.observe(.callbackEmitted(callback, answering: answering))
            for stream in streams.values { stream.yield(callback) }
            delegate?.deliver(callback)
        case .loadConfiguration(let operation, let request), .callBackend(let operation, let request):
            startBackendTask(operation, request)
        case .resubmit(let held):
            mailbox.insert(contentsOf: held.map { Input.callReceived($0.id, $0.call) }, at: 0)
        case .drawFlowSecrets(let flow, let needsVerifier):
            let state = Base64URL.encode(environment.redirectStateRandom.bytes(32))
            let verifier = needsVerifier ? PKCE.verifier(from: environment.pkceVerifierRandom.bytes(32)) : nil
            immediate.append(.flowSecretsDrawn(flow, FlowSecrets(state: state, verifier: verifier)))
        case .startTimer(let timer, let deadline):
            timers.removeValue(forKey: timer)?.cancel()
            timers[timer] = environment.clock.schedule(at: deadline) { [weak self] in await self?.timerFired(timer) }
        case .cancelTimer(let timer):
            timers.removeValue(forKey: timer)?.cancel()
        case .persist(let tokens, let requestorID):
            do {
                try storage.save(tokens, deviceID: environment.deviceID, requestorID: requestorID)
            } catch {
                monitor?.observe(.storageFailed(String(describing: error)))
            }
        case .presentPlatformPicker(let flow, let dialog, let requestorID):
            startPickerTask(flow, dialog, requestorID: requestorID)
        case .dismissPlatformPicker(let flow):
            platformWork.removeValue(forKey: .picker(flow))?.cancel()
        case .checkPlatformSignIn(let operation, let requestorID, let mvpdIDs):
            startPlatformTask(.signInCheck(operation)) { platform in
                .platformSignInChecked(operation, await platform?.signedInAssertion(requestorID: requestorID, mvpdIDs: mvpdIDs))
            }
        case .log(let log):
            monitor?.observe(.log(log))
        }
    }

    // MARK: - Platform picker

    private func startPickerTask(_ flow: FlowID, _ dialog: TvProviderDialog, requestorID: String) {
        startPlatformTask(.picker(flow)) { platform in
            // The machine only asks when a port was given; without one the picker counts as cancelled.
            .platformPickerAnswered(flow, await platform?.pickProvider(dialog, requestorID: requestorID) ?? .cancelled)
        }
    }

    /// Runs one question to the platform as a task whose answer comes back as an input.
    private func startPlatformTask(
        _ work: PlatformWork, _ ask: @escaping @Sendable ((any PlatformSSO)?) async -> Input
    ) {
        let platform = self.platform
        platformWork[work] = Task {
            let answer = await ask(platform)
            self.platformAnswered(work, answer)
        }
    }

    private func platformAnswered(_ work: PlatformWork, _ answer: Input) {
        // A dismissed picker's answer is dropped here: the machine already ended its flow.
        guard platformWork.removeValue(forKey: work) != nil else { return }
        enqueue(answer)
        resumeIdleWaitersIfIdle()
    }

    // MARK: - Backend and timers

    private func startBackendTask(_ operation: OperationID, _ request: BackendRequest) {
        monitor?.observe(.backendRequested(operation, request))
        operationsInFlight.insert(operation)
        let backend = self.backend
        Task {
            let result: Result<BackendResponse, BackendError>
            do throws(BackendError) {
                result = .success(try await backend.perform(request, operation: operation))
            } catch {
                result = .failure(error)
            }
            self.backendFinished(operation, request, result)
        }
    }

    private func backendFinished(
        _ operation: OperationID, _ request: BackendRequest, _ result: Result<BackendResponse, BackendError>
    ) {
        defer { operationFinished(operation) }
        monitor?.observe(.backendFinished(operation, result))
        guard case .configuration(let requestorID, _, _, _) = request else {
            switch result {
            case .success(let response): enqueue(.backendAnswered(operation, response))
            case .failure(let error): enqueue(.backendFailed(operation, error))
            }
            return
        }
        switch result {
        case .success(.configuration(let configuration)) where configuration.requestorID == requestorID:
            var stored = StoredTokens.empty
            do {
                stored = try storage.load(deviceID: environment.deviceID, requestorID: requestorID)
            } catch {
                monitor?.observe(.storageFailed(String(describing: error)))
            }
            enqueue(.configurationLoaded(operation, configuration, stored, others: othersStored(requestorID)))
        case .success:
            enqueue(.configurationFailed(operation, .malformedResponse("not a configuration for '\(requestorID)'")))
        case .failure(let error):
            enqueue(.configurationFailed(operation, error))
        }
    }

    /// What other requestors stored on this device (for single sign-on); a storage that cannot say finds none.
    private func othersStored(_ requestorID: String) -> [AuthenticationToken] {
        do {
            return try storage.authentications(deviceID: environment.deviceID).filter { $0.requestorID != requestorID }
        } catch {
            monitor?.observe(.storageFailed(String(describing: error)))
            return []
        }
    }

    private func timerFired(_ timer: TimerID) {
        timers[timer] = nil
        enqueue(.timerFired(timer))
    }

    /// Marks `operation` done once its answer has been processed, and wakes whoever waits for it.
    private func operationFinished(_ operation: OperationID) {
        operationsInFlight.remove(operation)
        let ready = finishWaiters.filter { $0.operation == operation }
        finishWaiters.removeAll { $0.operation == operation }
        for waiter in ready { waiter.resume.resume() }
        resumeIdleWaitersIfIdle()
    }

    private func resumeIdleWaitersIfIdle() {
        if platformWork.isEmpty, !draining, !platformWaiters.isEmpty {
            let waiters = platformWaiters
            platformWaiters.removeAll()
            for waiter in waiters { waiter.resume() }
        }
        guard operationsInFlight.isEmpty, platformWork.isEmpty, !draining, !idleWaiters.isEmpty else { return }
        let waiters = idleWaiters
        idleWaiters.removeAll()
        for waiter in waiters { waiter.resume() }
    }
}
