/// Running to completion: the mailbox, one input at a time, each step saved before it is taken.
extension AccessEnabler {
    /// How often one input is decided again after losing a compare-and-set to another writer
    /// before its save counts as failed.
    package static let conflictRetries = 8

    /// What a step does when its save loses the compare-and-set to another writer.
    package enum OnLostSave: Sendable {
        /// Read the store and decide the input again on what it holds, up to ``conflictRetries`` times;
        /// then the save counts as failed.
        case decideAgain
        /// Drop the step: the input was decided on a read the store has moved past, and whoever made
        /// it reads again (a `storageChanged` fed by the reconciliation itself; a configuration).
        case drop
        /// Count the save as failed at once (a configuration's last attempt).
        case fail
    }

    /// What came of an input: settled (taken, replaced by what the machine is told instead, or the engine
    /// closed), or dropped because its save lost to another writer (``OnLostSave/drop``).
    package enum StepOutcome: Sendable, Equatable {
        /// Nothing more to do for the input.
        case settled
        /// The step was dropped: its caller reads the store and decides again.
        case lostToAnotherWriter
    }

    /// The pauses between attempts at a save that failed for a passing reason: 50 ms, doubling up to
    /// 1 s, while the next pause still ends within the window (real time: the store is a real server).
    struct StorageRetry {
        let deadline: ContinuousClock.Instant
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

    /// Sleeps for `duration` on a task nobody cancels: a pause between attempts at a save lasts as
    /// long as it says, whichever task runs the step.
    static func pause(for duration: Duration) async {
        await Task { try? await Task.sleep(for: duration) }.value
    }

    func submit(_ call: EntitlementCall, awaitingAnswer: Bool = false, orDeviceNeed: Bool = false) async -> CallID {
        state.lastCallID += 1
        let id = CallID(state.lastCallID)
        if awaitingAnswer { state.awaitedAnswers[id] = .expected }
        if orDeviceNeed { state.needsAwaited.insert(id) }
        guard !state.closed else {
            emit(.status(Self.sessionClosedReport), answering: [id], closing: true, delegate: delegate)
            return id
        }
        state.unanswered.insert(id)
        monitor?.observe(.callReceived(id, call))
        let input = Input.callReceived(id, call)
        if stepAtOnce(input) {
            await runWhatTheStepLeft()
        } else {
            await enqueueAndWait(.input(input))
        }
        return id
    }

    /// Runs what a step taken at once left to run — the secrets it drew, the held calls it handed
    /// back — before its call returns, as the mailbox runs them after a step it took.
    private func runWhatTheStepLeft() async {
        guard state.immediate.isEmpty, state.mailbox.isEmpty else {
            // Queued behind them: returns once they have run (a cancelled caller's task does not carry them).
            await enqueueAndWait(.storageCheck)
            return
        }
        resumeIdleWaitersIfIdle()
    }

    /// Queues `work` and returns once the machine has handled it and its actions ran (so the
    /// call's synchronous callbacks were delivered) — or, for a caller whose task is cancelled, at
    /// once: the work stays queued and runs all the same.
    func enqueueAndWait(_ work: Work) async {
        guard !state.closed else { return }
        state.lastTicket += 1
        let ticket = state.lastTicket
        state.mailbox.append((work, ticket, monitor == nil ? nil : ContinuousClock.now))
        if !state.draining, Task.isCancelled {
            // A cancelled caller does not carry the engine's work: a step's storage, provider and
            // platform calls run on a task of the engine's own, which nobody cancels.
            state.draining = true
            environment.startTask { await self.drain() }
        }
        guard state.draining else { return await drain() }
        await wait(for: .ticketRun(ticket))
    }

    /// Runs the mailbox to empty, one input at a time; a drain already running keeps the work
    /// (a call made from a callback is queued behind the current step, never nested in it).
    /// Storage is awaited inside a step: whatever arrives meanwhile waits in the mailbox.
    private func drain() async {
        state.draining = true
        while !state.closed {
            if !state.immediate.isEmpty {
                await process(state.immediate.removeFirst())
            } else if let (work, ticket, queued) = state.mailbox.popFirst() {
                if let queued { monitor?.observe(mailboxWait: ContinuousClock.now - queued, behind: state.mailbox.count) }
                switch work {
                case .input(let input):
                    if let failure = await reconcileWithStorage(), let instead = Self.input(insteadOf: input, notRead: failure) {
                        // The store could not be read: the input is not decided on a view it may have moved past.
                        await process(instead)
                    } else {
                        await process(input)
                    }
                case .configurationAnswered(let operation, let requestorID, let result):
                    await configurationAnswered(operation, requestorID: requestorID, result)
                case .storageCheck:
                    await reconcileWithStorage()
                }
                while !state.immediate.isEmpty { await process(state.immediate.removeFirst()) }
                if let ticket { state.waiters.resume(.ticketRun(ticket)) }
            } else {
                break
            }
        }
        state.draining = false
        resumeIdleWaitersIfIdle()
    }

    /// Feeds one input to the machine and runs its actions. When the input asks for a save, the
    /// save (a compare-and-set) runs first, before any other action, and the step is committed
    /// only after it: if another writer got there first, the step is dropped and — as `onLostSave`
    /// says — decided again on what storage now holds, left to its caller, or counted as a failed
    /// save; a save that failed for a passing reason is
    /// decided and tried again after a pause, within ``EngineSettings/storageRetryWindow``. If the save
    /// still fails, the step of a call or a backend answer is dropped and the machine told instead
    /// (``input(insteadOf:notSaved:)``); any other step is taken in memory and the machine told
    /// (`Input.storageWriteFailed(_:)`).
    @discardableResult
    func process(_ input: Input, onLostSave: OnLostSave = .decideAgain) async -> StepOutcome {
        var conflicts = 0
        var retry = StorageRetry(window: state.machine.settings.storageRetryWindow)
        while true {
            let now = environment.clock.now()
            var next = state.machine
            let step = next.handle(input, at: now)
            var failure: TokenStorageError?
            if let save = step.save {
                do throws(TokenStorageError) {
                    try await self.save(save.tokens, requestorID: save.requestorID)
                } catch where error.code == .conflict && onLostSave == .drop {
                    return .lostToAnotherWriter
                } catch where error.code == .conflict && onLostSave == .decideAgain && conflicts < Self.conflictRetries {
                    conflicts += 1
                    await reconcileWithStorage(force: true)
                    continue
                } catch where error.isTransient && retry.mayPause {
                    // The store is away for a moment (restarting, failing over, busy): decide and save
                    // again shortly; nothing of this step is told before its save holds. (A write the
                    // store made although its answer was lost comes back as a conflict, handled above.)
                    let pause = retry.nextPause()
                    monitor?.observe(.storageFailed("\(error.description) (trying again in \(pause))"))
                    await Self.pause(for: pause)
                    continue
                } catch {
                    failure = error
                }
            }
            guard !state.closed else { return .settled }  // closed while the save ran: nothing more happens here
            if let failure, let instead = Self.input(insteadOf: input, notSaved: failure) {
                // The step is not taken: nothing it would tell the device holds anywhere but here.
                monitor?.observe(.storageFailed(failure.description))
                return await process(instead, onLostSave: onLostSave)
            }
            commit(consume next, step, of: input, at: now, notSaved: failure)
            return .settled
        }
    }

    /// Takes a step the machine decided: `next` becomes the machine and the step's actions run, in
    /// order. A save that failed (`failure`) is told to the machine next, before any other input.
    private func commit(_ next: consuming EntitlementMachine, _ step: MachineStep, of input: Input, at now: Timestamp, notSaved failure: TokenStorageError?) {
        state.machine = consume next
        if let following = step.storeFollowing {
            if case .follow(let requestorID) = following { state.followedRequestorID = requestorID } else { state.followedRequestorID = nil }
        }
        monitor?.observe(.inputHandled(HandledInput(input), at: now))
        if let monitor {
            for row in state.machine.lastTransitions { monitor.observe(.transition(row)) }
        }
        // The delegate read once a step (a weak reference's load is an atomic operation on its side table):
        // it cannot change within one — `setDelegate(_:)` is a call of its own on this actor.
        let delegate = self.delegate
        for action in step.effects { run(action, delegate: delegate) }
        for flow in step.secretsToDraw { drawSecrets(flow) }
        resubmit(step.resubmitted)
        if let failure {
            monitor?.observe(.storageFailed(failure.description))
            state.immediate.insert(.storageWriteFailed(failure.description), at: 0)
        }
    }

    /// Takes `input`'s step at once, without suspending, when nothing is queued or running before it,
    /// the stored tokens are known unchanged without asking the store, and the step saves nothing —
    /// as most calls answered from what the machine holds do. Returns false, having changed
    /// nothing, when the input must go through the mailbox (its step is decided again there).
    func stepAtOnce(_ input: Input) -> Bool {
        guard !state.draining, state.mailbox.isEmpty, state.immediate.isEmpty, !state.closed, storageUnchangedAtHand() else { return false }
        let now = environment.clock.now()
        var next = state.machine
        let step = next.handle(input, at: now)
        guard step.save == nil else { return false }
        monitor?.observe(mailboxWait: .zero, behind: 0)
        state.draining = true
        commit(consume next, step, of: input, at: now, notSaved: nil)
        state.draining = false
        return true
    }

    /// What the machine is told instead of an input that could not be decided on what the store holds (it
    /// could not be read): a call is refused (`Input.callNotRead(_:_:reason:)`, `STORAGE_UNAVAILABLE`), a
    /// backend answer counts as a failed request (``BackendError/storageUnavailable(_:)``), and so do a
    /// provider's credentials and verification (``ProviderFailure/notRead(_:)``): nothing is handed out,
    /// and no sign-in confirmed, on a view the store may have moved past (a logout or a sign-out through
    /// another instance). Nil for `setRequestor` (it reads the store
    /// itself) and every other input (a timer, a provider's other answers): those are decided on the view as
    /// it is, and a step of theirs that must save fails with the store.
    package static func input(insteadOf input: Input, notRead error: TokenStorageError) -> Input? {
        var reason: String { Redactor.redact(String(error.description.prefix(200))) }
        switch input {
        case .callReceived(_, .setRequestor): return nil
        case .callReceived(let id, let call): return .callNotRead(id, call, reason: reason)
        case .backendAnswered(let operation, _): return .backendFailed(operation, .storageUnavailable(reason))
        case .providerAnswered(let operation, .credentials(.success)): return .providerAnswered(operation, .credentials(.failure(.notRead(reason))))
        case .providerAnswered(let operation, .verified(.success)): return .providerAnswered(operation, .verified(.failure(.notRead(reason))))
        default: return nil
        }
    }

    /// What the machine is told instead of an input whose step could not be saved: a call is refused
    /// (`Input.callNotSaved(_:_:reason:)`), a backend answer counts as a failed request
    /// (``BackendError/storageUnavailable(_:)``), and so does a provider's sign-in, renewal or credentials to keep
    /// (``ProviderFailure/notSaved(_:)``), and so do a provider's step-up advice and a token it calls
    /// invalid in answer to a request or a verification (also the one at `setRequestor`), and another instance's renewal
    /// stopping standing (`Input.renewalNotMarked(provider:reason:)`: the renewal would start), so no instance tells the
    /// device what the store does not hold, nor renews a token no other instance knows is being renewed. Nil for `setRequestor` (it always completes) and every other input: those steps are taken
    /// in memory and saved again after the next input.
    package static func input(insteadOf input: Input, notSaved error: TokenStorageError) -> Input? {
        var reason: String { Redactor.redact(String(error.description.prefix(200))) }
        switch input {
        case .callReceived(_, .setRequestor): return nil
        case .callReceived(let id, let call): return .callNotSaved(id, call, reason: error.description)
        case .backendAnswered(let operation, _): return .backendFailed(operation, .storageUnavailable(reason))
        case .providerAnswered(let operation, .signedIn(.success)): return .providerAnswered(operation, .signedIn(.failure(.notSaved(reason))))
        case .providerAnswered(let operation, .renewed(.success)): return .providerAnswered(operation, .renewed(.failure(.notSaved(reason))))
        case .providerAnswered(let operation, .credentials(.success)):
            return .providerAnswered(operation, .credentials(.failure(.notSaved(reason))))
        case .providerAnswered(let operation, .credentials(.failure(let failure))) where failure.kind == .stepUpRequired:
            // A step-up the store does not hold could not be finished on another instance.
            return .providerAnswered(operation, .credentials(.failure(.notSaved(reason))))
        case .providerAnswered(let operation, .credentials(.failure(.invalidToken))):
            // A renewal the store does not hold as running would run again on every other instance, and
            // its new token could not be saved either: the request fails instead.
            return .providerAnswered(operation, .credentials(.failure(.notSaved(reason))))
        case .providerAnswered(let operation, .verified(.failure(.invalidToken))):
            // So with a verification: the account stands as it was, and the next use renews.
            return .providerAnswered(operation, .verified(.failure(.notSaved(reason))))
        case .timerFired(.renewalElsewhere(let provider)):
            // And when another instance's renewal stopped standing: this one renews nothing it cannot mark.
            return .renewalNotMarked(provider: provider, reason: reason)
        default: return nil
        }
    }
}
