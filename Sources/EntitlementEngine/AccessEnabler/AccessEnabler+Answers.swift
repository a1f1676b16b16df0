/// Answers as values: awaiting one call's callback, and streams of every callback.
extension AccessEnabler {
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
        try await awaitCallback(to: call, within: timeLimit, orDeviceNeed: false)
    }

    /// Makes `call` and returns the first thing the device must do for it to go on — open a page,
    /// choose a provider, show a registration code — or its answer, whichever comes first: what a
    /// request/response backend sends back to the device's request.
    ///
    /// A device need goes to every interaction of this engine waiting at that moment (they are all the
    /// device's); a call whose flow is past its need (it joins a login reading its profile) waits for
    /// its answer. After a need the call goes on: its answer reaches the delegate
    /// and the streams, and any later interaction whose call the same flow answers. Cancellation and
    /// `timeLimit` end the wait as for ``answer(to:within:)``.
    public func interact(_ call: EntitlementCall, within timeLimit: Duration? = nil) async throws(EntitlementFailure) -> Interaction {
        let callback = try await awaitCallback(to: call, within: timeLimit, orDeviceNeed: true)
        return Interaction(deviceNeed: callback) ?? .answered(callback)
    }

    /// Makes `call` and waits for its answer — or, `orDeviceNeed`, for the first device need.
    private func awaitCallback(to call: EntitlementCall, within timeLimit: Duration?, orDeviceNeed: Bool) async throws(EntitlementFailure)
        -> Callback
    {
        guard !Task.isCancelled else { throw EntitlementFailure(waitEnded: ErrorCode.callWaitCancelled) }
        let id = await submit(call, awaitingAnswer: true, orDeviceNeed: orDeviceNeed)
        if case .arrived(let callback)? = state.awaitedAnswers[id] {
            state.awaitedAnswers[id] = nil
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
            await withCheckedContinuation { state.awaitedAnswers[id] = .waiting($0) }
        } onCancel: {
            Task { await self.endWait(id, ErrorCode.callWaitCancelled) }
        }
        return try result.get()
    }

    /// Ends the wait for `id`'s answer, if its caller still waits: the call stays accepted and is answered
    /// through the delegate and the streams as usual.
    private func endWait(_ id: CallID, _ code: String) {
        guard case .waiting(let caller)? = state.awaitedAnswers[id] else { return }
        state.awaitedAnswers[id] = nil
        state.needsAwaited.remove(id)
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

    func stream<Element: Sendable>(_ bufferLimit: Int, _ make: @escaping @Sendable (Callback, [CallID]) -> Element)
        -> AsyncStream<Element>
    {
        state.lastStreamID += 1
        let id = state.lastStreamID
        let (stream, continuation) = AsyncStream.makeStream(of: Element.self, bufferingPolicy: .bufferingOldest(max(1, bufferLimit)))
        continuation.onTermination = { [weak self] _ in Task { await self?.removeStream(id) } }
        state.streams[id] = StreamSink(
            yield: { callback, answering in
                if case .dropped = continuation.yield(make(callback, answering)) { return false }
                return true
            },
            finish: { continuation.finish() })
        return stream
    }

    private func removeStream(_ id: UInt64) { state.streams[id] = nil }
}
