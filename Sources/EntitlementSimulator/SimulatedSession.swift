import EntitlementEngine

/// One engine wired to a simulator on a manual clock with seeded randomness: the same run every
/// time. Tests, the demo and scenarios drive the engine through it.
public struct SimulatedSession: Sendable {
    /// The clock shared by the engine and the simulator.
    public let clock: ManualClock
    /// The simulated backend and MVPDs.
    public let simulator: Simulator
    /// Records calls and callbacks and checks exactly-once.
    public let ledger: CallLedger
    /// The engine under test.
    public let enabler: AccessEnabler
    /// The engine's token storage.
    public let storage: any TokenStorage
    /// When set, backend answers are delivered one at a time in operation order by ``settle()``.
    package let stepped: SteppedBackend?
    /// The device's platform TV-provider account, when the session has one (cookbook D).
    public let platform: SimulatedPlatform?
    /// The gate the chain's providers answer through when the session delivers in order.
    package let steppedProviders: SteppedProviders?

    /// The seed a session draws its randomness from unless told otherwise (its simulator's is this + 100).
    public static let defaultSeed: UInt64 = 1

    /// Creates a session. With `overV2Wire`, the engine's backend is a `V2Client` talking to the
    /// simulator as a REST API V2 service (`V2Client.simulated(_:)`): every request and answer goes
    /// through V2's JSON, registration and access tokens included. A `backend` given replaces both (for
    /// example a `V2Client` over HTTP to a server of this session's simulator).
    /// A `platform` given is the device's account as it already is (a restarted app's device). With
    /// `taskExecutor`, the engine's own tasks prefer it (`EngineEnvironment.taskExecutor`). A `recorder`
    /// (EntitlementTracing's `TraceRecorder`, or any monitor) watches the engine beside the session's ledger.
    public init(
        world: SimulatedWorld = .default, deviceID: String = "device-1", seed: UInt64 = defaultSeed,
        settings: EngineSettings = .simulated, storage: any TokenStorage = InMemoryTokenStorage(),
        clock: ManualClock = ManualClock(), simulator: Simulator? = nil, delegate: (any AccessEnablerDelegate)? = nil,
        deliversInOrder: Bool = false, recorder: (any EngineMonitor)? = nil, echo: (@Sendable (EngineEvent) -> Void)? = nil,
        platformSSO: Bool = false, overV2Wire: Bool = false, backend: (any EntitlementService)? = nil,
        platform: SimulatedPlatform? = nil, providers: ProviderChain? = nil, taskExecutor: (any TaskExecutor)? = nil
    ) {
        self.clock = clock
        let simulator = simulator ?? Simulator(world: world, clock: clock, seed: seed &+ 100)
        self.simulator = simulator
        let platform = platform ?? (platformSSO ? SimulatedPlatform(simulator: simulator, deviceID: deviceID) : nil)
        self.platform = platform
        // The platform learns of each picker as the engine shows it, so the user's scripted choice is that picker's.
        self.ledger = CallLedger(
            echo: platform.map { platform in
                { @Sendable event in
                    if case .callbackEmitted(.presentTvProviderDialog(let dialog), _) = event { platform.engineShowed(dialog) }
                    echo?(event)
                }
            } ?? echo)
        self.storage = storage
        let port: any EntitlementBackend =
            if let backend { backend.port.backend } else if overV2Wire { V2Client.simulated(simulator) } else { simulator.backend }
        self.stepped = deliversInOrder ? SteppedBackend(port) : nil
        let chain = providers ?? simulator.providerChain()
        let gate = deliversInOrder && chain != nil ? SteppedProviders() : nil
        self.steppedProviders = gate
        var settings = settings
        if settings.domainName == nil { settings.domainName = SimulatedWorld.appDomain }
        var environment = EngineEnvironment.deterministic(clock: clock, deviceID: deviceID, seed: seed)
        environment.taskExecutor = taskExecutor
        self.enabler = AccessEnabler(
            backend: stepped ?? port, delegate: delegate, storage: storage, environment: environment, settings: settings,
            monitor: ledger, recorder: recorder, platform: platform, providers: chain.map { gate?.wrapping($0) ?? $0 })
        SessionCollector.current?.add(self)
    }

    /// Lets the engine run until nothing more can happen without the outside world: with
    /// `stepped` set, waits for platform pickers (answered from the script, unless one is held
    /// open for the script to answer later) and delivers every
    /// parked answer (except held ones, the backend's and the providers') in operation order, each
    /// fully processed before the next;
    /// otherwise waits until the engine is idle. Returns early when the calling task is cancelled.
    public func settle() async {
        guard let stepped else { return await enabler.whenIdle() }
        while !Task.isCancelled {
            // A picker the user holds open is the script's to end: the engine waits for it, settling does not
            // (a sign-in check it asks meanwhile is waited for).
            if platform?.holdsPicker ?? false { await enabler.whenPlatformChecked() } else { await enabler.whenPlatformAnswered() }
            await stepped.whenParked(await enabler.backendOperationsInFlight)
            let asking = await enabler.providerOperationsInFlight
            if let gate = steppedProviders { await gate.whenParked(Set(asking.map(\.rawValue))) }
            let nextAnswer = await stepped.nextDeliverable()
            let nextProvider = await steppedProviders?.next()
            if let provider = nextProvider, nextAnswer.map({ provider < $0.rawValue }) ?? true {
                await steppedProviders?.release(provider)
                if let released = asking.first(where: { $0.rawValue == provider }) { await enabler.whenFinished(released) }
                continue
            }
            guard let next = nextAnswer else {
                // Providers answering without a gate answer on their own; what they answer may ask the backend again.
                let heldBack = Set(await steppedProviders?.heldRequests().map(\.request) ?? [])
                guard asking.contains(where: { !heldBack.contains($0.rawValue) }) else { return }
                await enabler.whenProvidersAnswered()
                continue
            }
            await stepped.deliver(next)
            await enabler.whenFinished(next)
        }
    }

    /// The simulated browser.
    public var userAgent: SimulatedUserAgent { simulator.userAgent }

    /// The URL of the most recent `navigateToUrl`, if any.
    public var lastNavigation: String? {
        ledger.callbacks.reversed().lazy.compactMap { callback -> String? in
            if case .navigateToUrl(let url) = callback { return url }
            return nil
        }.first
    }

    /// Signs `username` in at the last `navigateToUrl` (once the engine has settled: the login URL
    /// comes with the session's answer) and hands the final URL to `handleExternalURL`. Returns the
    /// visit; `nil` id when the chain did not reach the app.
    @discardableResult
    public func logIn(as username: String, password: String) async -> (visit: SimulatedUserAgent.Visit, call: CallID?) {
        await settle()
        guard let url = lastNavigation else {
            return (SimulatedUserAgent.Visit(hops: [], outcome: .failed(status: 0, message: "no navigateToUrl")), nil)
        }
        let visit = await userAgent.logIn(at: url, username: username, password: password)
        guard let appURL = visit.appURL else { return (visit, nil) }
        let call = await enabler.handleExternalURL(appURL)
        await settle()
        return (visit, call)
    }
}
