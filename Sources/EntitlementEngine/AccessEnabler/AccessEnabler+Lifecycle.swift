/// Closing, rest, and waiting for the engine: idle, quiet, at rest, an operation finished.
extension AccessEnabler {
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
        guard !state.closed else { return 0 }
        state.closed = true
        for timer in state.timers.values { timer.cancel() }
        state.timers.removeAll()
        for task in state.platformWork.values { task.cancel() }
        state.platformWork.removeAll()
        for task in state.backendRequests.values { task.cancel() }
        state.backendRequests.removeAll()
        state.operationsInFlight.removeAll()
        state.providerOperations.removeAll()
        state.immediate.removeAll()
        state.mailbox.removeAll()
        state.waiters.resume { if case .ticketRun = $0 { true } else { false } }
        let calls = state.unanswered.inOrder
        monitor?.observe(.log(.sessionClosed(answered: calls.count)))
        if !calls.isEmpty { emit(.status(Self.sessionClosedReport), answering: calls, closing: true, delegate: delegate) }
        state.waiters.resume { if case .finished = $0 { true } else { $0 == .providersAnswered } }
        resumeIdleWaitersIfIdle()
        return calls.count
    }

    /// Whether ``closeSession()`` ended this engine.
    public var isClosed: Bool { state.closed }

    // MARK: - Rest

    /// The engine as a value, when it is at rest: nothing queued or running, no backend request,
    /// platform question or timer pending (a login waiting for its redirect is not at rest; one waiting
    /// for the user to pick a provider is, and its rest keeps it), no caller awaiting an answer and no
    /// stream open. Nil otherwise. The engine stays usable either way; an owner that keeps the rest and
    /// drops the engine (``AccessEnabler/init(resuming:backend:delegate:storage:monitor:platform:providers:)``
    /// brings it back) must send it nothing in between.
    public func rest() -> EngineRest? {
        guard isAtRest, state.streams.isEmpty else { return nil }
        return EngineRest(
            parts: EngineRest.Parts(machine: state.machine.resting(), lastCallID: state.lastCallID, storeVersion: state.viewHeldBack ? nil : state.storeVersion, environment: environment))
    }

    /// Returns once the engine is at rest as ``rest()`` means it (streams aside): every call answered,
    /// every request, platform question and timer done. A login waiting for its redirect ends by its
    /// deadline, so this always returns, at the latest when the engine's own deadlines pass — or at once
    /// when the calling task is cancelled.
    public func whenAtRest() async {
        guard !isAtRest else { return }
        await wait(for: .atRest)
    }

    private var isAtRest: Bool { isQuiet && state.awaitedAnswers.isEmpty }

    /// At rest but for callers still waiting for answers (``answer(to:within:)``): nothing runs, so what a
    /// waiting call needs is the user's — a provider picker left open.
    private var isQuiet: Bool {
        !state.draining && state.mailbox.isEmpty && state.immediate.isEmpty && state.operationsInFlight.isEmpty && state.backendRequests.isEmpty
            && state.platformWork.isEmpty && state.timers.isEmpty
    }

    /// Returns once nothing runs (``whenAtRest()`` but for callers still waiting for an answer): a
    /// session host that closes a session waits for this, then cancels an open picker.
    package func whenQuiet() async {
        guard !isQuiet else { return }
        await wait(for: .quiet)
    }

    // MARK: - Inspection (for the package's test drivers: the simulator's sessions, the host, the explorer)

    /// The machine as it is now.
    package var machineSnapshot: EntitlementMachine { state.machine }

    /// The login whose provider choice (the engine's picker or the platform's) waits for the user, if any.
    package var loginChoosingProvider: FlowID? { state.machine.loginChoosingProvider }

    /// Stops waiting for the provider choice of login `flow` (nil: whichever picker is open), as a host
    /// whose time limit passed or whose session closes does: the login's calls end with
    /// `PROVIDER_NOT_SELECTED_ERROR`, authorizations waiting for it fail (`USER_NOT_AUTHENTICATED_ERROR`),
    /// and the platform's picker is dismissed.
    /// Unlike `setSelectedProvider(nil)` — the user's cancel, which ends every login of the device,
    /// also a registration code another instance shows — it writes nothing over the store, and it is
    /// decided, like every input, once the engine has followed the store: a picker whose choice was made
    /// elsewhere meanwhile is left to that login. True when such a picker was open when asked.
    @discardableResult
    package func abandonProviderChoice(_ flow: FlowID? = nil) async -> Bool {
        guard let open = state.machine.loginChoosingProvider, flow == nil || flow == open else { return false }
        await enqueueAndWait(.input(.providerChoiceAbandoned(open)))
        return true
    }

    /// Returns once no backend request is in flight, no question to the platform (picker or sign-in
    /// check) is pending and no input is waiting — or when the calling task is cancelled.
    public func whenIdle() async {
        guard !state.operationsInFlight.isEmpty || !state.platformWork.isEmpty || state.draining else { return }
        await wait(for: .idle)
    }

    /// Returns once no platform picker is open (answered, or dismissed by the engine), no platform
    /// sign-in check is running, and their answers have been handled.
    package func whenPlatformAnswered() async {
        guard !state.platformWork.isEmpty || state.draining else { return }
        await wait(for: .platformAnswered)
    }

    /// Returns once no platform sign-in check is running and their answers have been handled; a picker
    /// may still be open (one the user holds open is the user's to end, not something to wait for).
    package func whenPlatformChecked() async {
        guard isCheckingPlatform else { return }
        await wait(for: .platformChecked)
    }

    private var isCheckingPlatform: Bool {
        state.draining || state.platformWork.keys.contains { if case .signInCheck = $0 { true } else { false } }
    }

    /// The backend requests sent and not yet answered.
    package var backendOperationsInFlight: Set<OperationID> { state.operationsInFlight.subtracting(state.providerOperations) }

    /// The operations in flight that ask a provider of the chain.
    package var providerOperationsInFlight: Set<OperationID> { state.providerOperations }

    /// Returns once no provider of the chain is asked for anything.
    package func whenProvidersAnswered() async {
        guard !state.providerOperations.isEmpty else { return }
        await wait(for: .providersAnswered)
    }

    /// Returns once the answer to `operation` has been fed to the machine and its actions run
    /// (at once if it is not in flight).
    package func whenFinished(_ operation: OperationID) async {
        guard state.operationsInFlight.contains(operation) else { return }
        await wait(for: .finished(operation))
    }



    /// Resumes the waits whose condition now holds: the platform answered, quiet, at rest, idle. A quiet
    /// engine lets go of what its emptied collections keep the first time and every 64th time after.
    func resumeIdleWaitersIfIdle() {
        if state.waiters.isWaiting(for: .platformAnswered), state.platformWork.isEmpty, !state.draining { state.waiters.resume(.platformAnswered) }
        if state.waiters.isWaiting(for: .platformChecked), !isCheckingPlatform { state.waiters.resume(.platformChecked) }
        if state.waiters.isWaiting(for: .quiet), isQuiet { state.waiters.resume(.quiet) }
        if state.waiters.isWaiting(for: .atRest), isAtRest { state.waiters.resume(.atRest) }
        if state.waiters.isWaiting(for: .idle), state.operationsInFlight.isEmpty, state.platformWork.isEmpty, !state.draining { state.waiters.resume(.idle) }
        if isQuiet {
            // Not at every quiet point: a call answered at once would free and allocate again what its
            // next call uses (a quarter of `checkAuthentication`'s time through the actor).
            state.quietPoints &+= 1
            if state.quietPoints % Self.quietPointsPerRelease == 1 { releaseEmptiedStorage() }
        }
    }

    /// Every how many quiet points a quiet engine lets go of its emptied collections' storage (the
    /// first one included).
    static let quietPointsPerRelease: UInt64 = 64

    /// Lets go of the storage emptied collections keep (a removal keeps a collection's buffer), in the
    /// machine and around it: a resident engine between calls holds none.
    private func releaseEmptiedStorage() {
        state.machine.releaseEmptiedStorage()
        state.mailbox.releaseEmptiedStorage()
        state.waiters.releaseEmptiedStorage()
        if state.immediate.isEmpty { state.immediate = [] }
        if state.timers.isEmpty { state.timers = [:] }
        if state.platformWork.isEmpty { state.platformWork = [:] }
        if state.operationsInFlight.isEmpty { state.operationsInFlight = [] }
        if state.providerOperations.isEmpty { state.providerOperations = [] }
        if state.backendRequests.isEmpty { state.backendRequests = [:] }
        if state.streams.isEmpty { state.streams = [:] }
        state.unanswered.releaseEmptiedStorage()
        if state.awaitedAnswers.isEmpty { state.awaitedAnswers = [:] }
        if state.needsAwaited.isEmpty { state.needsAwaited = [] }
    }

    /// Suspends until the engine resumes `condition`'s waiters (when it holds, or the engine closes) or
    /// the calling task is cancelled.
    func wait(for condition: EngineCondition) async {
        let id = state.waiters.nextID()
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                state.waiters.add(condition, id: id, continuation)
                if Task.isCancelled { state.waiters.resume(id: id) }
            }
        } onCancel: {
            Task { await self.stopWaiting(id) }
        }
    }

    private func stopWaiting(_ id: UInt64) { state.waiters.resume(id: id) }
}
