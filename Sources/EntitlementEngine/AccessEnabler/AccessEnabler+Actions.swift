import EntitlementSupport

/// The machine's actions run, and callbacks handed out.
extension AccessEnabler {
    /// Runs one of a step's effects (its save, secrets and resubmitted calls are run by ``process(_:onLostSave:)``);
    /// `delegate` is the delegate as the step began.
    func run(_ action: Action, delegate: (any AccessEnablerDelegate)?) {
        guard !state.closed else { return }
        switch action {
        case .emit(let callback, let answering):
            monitor?.observe(.callbackEmitted(callback, answering: answering))
            emit(callback, answering: answering, delegate: delegate)
        case .loadConfiguration(let operation, let request):
            state.configurationLoading = operation
            startBackendTask(operation, request)
        case .callBackend(let operation, let request):
            startBackendTask(operation, request)
        case .askProvider(let operation, let provider, let request, let session):
            startProviderTask(operation, provider: provider, request, session)
        case .cancelRequest(let operation):
            cancelRequest(operation)
        case .startTimer(let timer, let deadline):
            state.timers.removeValue(forKey: timer)?.cancel()
            state.timers[timer] = environment.clock.schedule(at: deadline) { [weak self] in await self?.deliverTimer(timer) }
        case .cancelTimer(let timer):
            state.timers.removeValue(forKey: timer)?.cancel()
        case .presentPlatformPicker(let flow, let dialog, let requestorID, let request):
            startPickerTask(flow, dialog, requestorID: requestorID, request: request)
        case .dismissPlatformPicker(let flow):
            state.platformWork.removeValue(forKey: .picker(flow))?.cancel()
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
    /// and `delegate` (the engine's, read by the caller).
    func emit(_ callback: Callback, answering: [CallID], closing: Bool = false, delegate: (any AccessEnablerDelegate)?) {
        guard !state.closed || closing else { return }
        if !answering.isEmpty { for id in answering { state.unanswered.remove(id) } }
        if !state.awaitedAnswers.isEmpty {
            for id in answering { deliverAwaited(callback, to: id) }
            // A device need goes to every caller that takes one (a device's requests all wait for it).
            if !state.needsAwaited.isEmpty, Interaction(deviceNeed: callback) != nil {
                for id in state.needsAwaited { deliverAwaited(callback, to: id) }
            }
        }
        for (id, stream) in state.streams where !stream.yield(callback, answering) {
            // The consumer fell a whole buffer behind: end its stream (documented in `callbacks`).
            stream.finish()
            state.streams[id] = nil
        }
        delegate?.callbackEmitted(callback, answering: answering)
    }

    /// Hands `callback` to the caller awaiting `id` (or keeps it for a caller not waiting yet); the
    /// first callback a caller gets is its own.
    private func deliverAwaited(_ callback: Callback, to id: CallID) {
        switch state.awaitedAnswers[id] {
        case .expected?:
            state.awaitedAnswers[id] = .arrived(callback)
            state.needsAwaited.remove(id)
        case .waiting(let caller)?:
            state.awaitedAnswers[id] = nil
            state.needsAwaited.remove(id)
            caller.resume(returning: .success(callback))
        case .arrived?, nil: break
        }
    }

    /// Draws `flow`'s `state` and feeds it back before any other input.
    func drawSecrets(_ flow: FlowID) {
        guard !state.closed else { return }
        let drawn = Base64URL.encode(environment.redirectStateRandom.bytes(32))
        state.immediate.append(.flowSecretsDrawn(flow, FlowSecrets(state: drawn)))
    }

    /// Feeds `held` calls back, in order, ahead of all queued work.
    func resubmit(_ held: [EntitlementMachine.QueuedCall]) {
        guard !held.isEmpty, !state.closed else { return }
        let now: ContinuousClock.Instant? = monitor == nil ? nil : .now
        let resubmitted: [(work: Work, ticket: UInt64?, queued: ContinuousClock.Instant?)] = held.map {
            (.input(.callReceived($0.id, $0.call)), nil, now)
        }
        state.mailbox.prepend(contentsOf: resubmitted)
    }
}
