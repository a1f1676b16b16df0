/// The entitlement engine for one device session, with the cookbook's API.
///
/// Every public call is turned into an `Input` for the pure `EntitlementMachine` and the
/// returned `MachineStep` is run (its save first, then its actions in order). Results come back through ``AccessEnablerDelegate`` and
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
    package static let knownOptions: Set<String> = ["applicationProfile", "visitorID", "handleSVC", "device_info"]

    /// Why `setOptions` refused its argument. A struct, not an enum: a check added later breaks no
    /// caller's `switch`.
    public struct OptionsError: Error, Sendable, Hashable, CustomStringConvertible {
        /// The keys that are not options AccessEnabler knows (empty when another check refused).
        public let unknownKeys: [String]

        /// These keys are not options AccessEnabler knows.
        package static func unknownKeys(_ keys: [String]) -> OptionsError { OptionsError(unknownKeys: keys) }

        /// Names the keys refused.
        public var description: String {
            "setOptions knows no option \(unknownKeys.map { "'\($0)'" }.joined(separator: ", ")); it knows \(AccessEnabler.knownOptions.sorted().joined(separator: ", "))."
        }
    }

    let backend: any EntitlementBackend
    /// The providers beside the TV provider, if a chain was given.
    let providers: ProviderChain?
    let storage: any TokenStorage
    let environment: EngineEnvironment
    let monitor: MonitorReference?
    let platform: (any PlatformSSO)?
    weak var delegate: (any AccessEnablerDelegate)?

    /// Work waiting for the machine, in arrival order: inputs, and configuration answers that
    /// still need the stored tokens read.
    enum Work {
        case input(Input)
        case configurationAnswered(OperationID, requestorID: String, Result<BackendResponse, BackendError>)
        /// The store says the tokens may have changed: read the version now.
        case storageCheck
    }

    /// What the engine waits for from the platform: an open picker (by flow) or a sign-in check
    /// (by operation). Either keeps the engine busy.
    enum PlatformWork: Hashable {
        case picker(FlowID)
        case signInCheck(OperationID)
    }

    /// Everything the actor changes: the machine, and what the shell keeps to run its steps.
    struct State: Sendable {
        var machine: EntitlementMachine
        /// Work waiting its turn, with when it was queued (only read by a monitor).
        var mailbox = WorkQueue<(work: Work, ticket: UInt64?, queued: ContinuousClock.Instant?)>()
        /// Inputs that run before any queued work (a flow's secrets, a save's failure).
        var immediate: [Input] = []
        /// How many times the engine went quiet (``resumeIdleWaitersIfIdle()``).
        var quietPoints: UInt64 = 0
        var lastTicket: UInt64 = 0
        var lastCallID: UInt64 = 0
        /// The configuration request last sent (`Action.loadConfiguration`): its answer reads the store; an
        /// answer to an earlier one is late and reads nothing.
        var configurationLoading: OperationID?
        // The flags sit behind the optional's tag byte (each between word-sized fields would take a word).
        /// Whether a drain runs the mailbox now.
        var draining = false
        /// Whether the machine kept a view of its own when it last followed the store (in the middle of a
        /// flow of its own): the store is read and followed again before every input until the view is the
        /// store's, however its version stands.
        var viewHeldBack = false
        /// Set by ``closeSession()``: the engine takes no more input and emits nothing more.
        var closed = false
        /// The requestor whose stored tokens the machine's view follows (the steps say when it changes:
        /// `MachineStep.storeFollowing`); nil while no requestor is configured.
        var followedRequestorID: String?
        /// The stored version the machine's view of storage corresponds to, for the requestor it
        /// was read or written for; nil until read (a save then reads first).
        var storeVersion: (requestorID: String, version: StorageVersion)?
        var timers: [TimerID: ScheduledTimer] = [:]
        var platformWork: [PlatformWork: Task<Void, Never>] = [:]
        var operationsInFlight: Set<OperationID> = []
        /// The operations in flight that ask a provider of the chain (not the backend).
        var providerOperations: Set<OperationID> = []
        /// Each request in flight (backend or provider), by operation: its task.
        var backendRequests: [OperationID: Task<Void, Never>] = [:]
        /// Everyone suspended until a condition of the engine holds.
        var waiters = EngineWaiters()
        var streams: [UInt64: StreamSink] = [:]
        var lastStreamID: UInt64 = 0
        /// Calls accepted and not yet answered (answered by a callback naming them, or by ``closeSession()``).
        var unanswered = UnansweredCalls()
        /// Calls whose caller awaits their answer (``answer(to:within:)``): the waiting caller, or the answer
        /// when it came before the caller started waiting.
        var awaitedAnswers: [CallID: AwaitedAnswer] = [:]
        /// Awaited calls whose caller takes the first device need instead (``interact(_:within:)``).
        var needsAwaited: Set<CallID> = []
    }

    // `@exclusivity(unchecked)`: only the actor's own synchronous code reaches its state, one job at a
    // time, and none of that code opens a second access to it while one is open (an access cannot span
    // an `await`, and the delegate, monitors and streams it calls cannot reach it). The run-time checks
    // could find nothing and cost a fifth of a `checkAuthentication` (*Performance*: the gate's actor
    // figure with and without them); the compiler's static checks remain.
    @exclusivity(unchecked) var state: State

    /// One consumer's stream: how to hand it a callback (false when its buffer is full) and end it.
    struct StreamSink {
        let yield: @Sendable (Callback, [CallID]) -> Bool
        let finish: @Sendable () -> Void
    }

    /// Where an awaited call's answer stands.
    enum AwaitedAnswer {
        case expected
        case waiting(CheckedContinuation<Result<Callback, EntitlementFailure>, Never>)
        case arrived(Callback)
    }

    /// Creates an engine.
    /// - Parameters:
    ///   - backend: the entitlement service: a ``V2Client`` (in tests, one on the simulator,
    ///     `V2Client.simulated(_:)` from EntitlementTesting), or a ``SharedConfigurationBackend`` in front of one.
    ///   - delegate: receives callbacks (held weakly, as AccessEnabler does).
    ///   - storage: where tokens live between sessions.
    ///   - environment: clock, device id and random sources.
    ///   - settings: redirect URL, timeouts, queue bound, tracking fields.
    ///   - monitor: observes every boundary event (tests, debug logs).
    ///   - recorder: a second monitor, the one that records the session as a trace (EntitlementTracing's
    ///     `TraceRecorder`); nil (the default) records nothing and costs nothing.
    ///   - platform: the device's TV-provider account (cookbook D); nil when the device has none.
    ///   - providers: the provider chain that answers authorization (``ProviderChain``); nil (the
    ///     default) is the TV provider alone, as in Adobe's SDK.
    public init(
        backend: any EntitlementService, delegate: (any AccessEnablerDelegate)? = nil,
        storage: any TokenStorage = InMemoryTokenStorage(), environment: EngineEnvironment,
        settings: EngineSettings = EngineSettings(), monitor: (any EngineMonitor)? = nil,
        recorder: (any EngineMonitor)? = nil, platform: (any PlatformSSO)? = nil, providers: ProviderChain? = nil
    ) {
        self.init(
            backend: backend, delegate: delegate, storage: storage, environment: environment, settings: settings, monitor: monitor,
            recorder: recorder, platform: platform, providers: providers, sharingSettings: SharedSettings?.none)
    }

    /// Creates an engine whose machine shares its settings, when equal, with the other engines created
    /// with the same `sharingSettings` (a host's: one copy of the settings for all its sessions).
    package init(
        backend: any EntitlementService, delegate: (any AccessEnablerDelegate)? = nil,
        storage: any TokenStorage = InMemoryTokenStorage(), environment: EngineEnvironment,
        settings: EngineSettings = EngineSettings(), monitor: (any EngineMonitor)? = nil,
        recorder: (any EngineMonitor)? = nil, platform: (any PlatformSSO)? = nil, providers: ProviderChain? = nil,
        sharingSettings: SharedSettings?
    ) {
        let observers: [any EngineMonitor] = [monitor, recorder].compactMap { $0 }
        let combined: (any EngineMonitor)? = observers.count > 1 ? MonitorGroup(observers) : observers.first
        var settings = settings
        settings.platformSSO = platform != nil
        settings.providers = providers?.descriptions ?? []
        self.providers = providers
        self.platform = platform
        let box = sharingSettings?.box(settings) ?? Boxed(settings)
        self.state = State(machine: EntitlementMachine(sharing: box, deviceID: environment.deviceID))
        self.state.machine.recordsTransitions = combined != nil
        self.backend = backend.port.backend
        self.delegate = delegate
        self.storage = storage
        self.environment = environment
        self.monitor = combined.map(MonitorReference.init)
        combined?.observe(.started(state.machine.settings, deviceID: environment.deviceID, at: environment.clock.now()))
    }

    /// Resumes an engine from ``rest()``: the same machine, call ids and environment, with this
    /// backend, delegate, storage and monitor. Nothing is emitted or observed on resuming (no
    /// `started` event: a monitor or trace recorder that watched the engine before it rested sees one
    /// continuous session).
    public init(
        resuming rest: EngineRest, backend: any EntitlementService, delegate: (any AccessEnablerDelegate)? = nil,
        storage: any TokenStorage = InMemoryTokenStorage(), monitor: (any EngineMonitor)? = nil,
        platform: (any PlatformSSO)? = nil, providers: ProviderChain? = nil
    ) {
        self.providers = providers
        self.platform = platform
        self.state = State(machine: rest.parts.machine.resumed())
        self.state.machine.recordsTransitions = monitor != nil
        self.state.followedRequestorID = rest.parts.machine.followedRequestorID
        self.state.lastCallID = rest.parts.lastCallID
        self.state.storeVersion = rest.parts.storeVersion
        self.backend = backend.port.backend
        self.delegate = delegate
        self.storage = storage
        self.environment = rest.parts.environment
        self.monitor = monitor.map(MonitorReference.init)
    }

    deinit {
        for stream in state.streams.values { stream.finish() }
        for timer in state.timers.values { timer.cancel() }
        for task in state.platformWork.values { task.cancel() }
        for task in state.backendRequests.values { task.cancel() }
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
    public func checkStorage() async { await enqueueAndWait(.storageCheck) }

    /// Makes any call given as a value (scripts, explorers, tools): the same as the named method.
    @discardableResult
    public func call(_ call: EntitlementCall) async -> CallID { await submit(call) }
}
