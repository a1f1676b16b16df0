import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Synchronization
import Testing

/// Awaiting a call's result beside the delegate: `authorize` returns the media token or throws the
/// failure its callback reported, `authenticate` returns once the login succeeded, and `answer(to:)`
/// returns any call's answering callback — also when it arrives long after the call.
@Suite("Async results", .checksExactlyOnce)
struct AsyncResultsTests {
    @Test func authorizeReturnsAVerifiableMediaTokenOrTheTypedFailure() async throws {
        let session = SimulatedSession()
        await session.signIn("frank", password: "furnace", provider: "bluesky-tv")
        let token = try await session.enabler.authorize("news-channel")
        let verifier = MediaTokenVerifier(key: SimulatedWorld.default.mediaTokenKey, clock: session.clock)
        expectEqual(verifier.verify(token, resource: "news-channel", requestor: "sim-requestor"), .valid)
        do {
            _ = try await session.enabler.authorize("sports-live")
            Issue.record("a denied resource was authorized")
        } catch {
            expectEqual(error.code, ErrorCode.userNotAuthorized)
            #expect(error.message.hasPrefix("Your BlueSky TV package does not include Sports Live"))
        }
        do {
            _ = try await session.enabler.authorize("")
            Issue.record("an empty resource was authorized")
        } catch {
            expectEqual(error.code, "INVALID_ARGUMENT", "a refusal is the failure: \(error)")
        }
        // The delegate's view is the same: every callback still flows, each call answered once.
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(callbacks.filter { $0.name == "setToken" }.count, 1)
        await session.expectClean()
    }

    @Test func anAwaitedLoginReturnsWhenTheUserHasSignedIn() async throws {
        let session = SimulatedSession()
        await session.configure()
        let enabler = session.enabler
        // The backend awaits the login while the device's user goes through picker and MVPD page.
        let login = Task { try await enabler.authenticate() }
        #expect(await eventually { session.ledger.callbacks.contains { $0.name == "displayProviderDialog" } })
        await enabler.setSelectedProvider("acme-cable")
        _ = await session.logIn(as: "alice", password: "wonderland")
        try await login.value
        // Cancelled logins fail with their code.
        let second = Task { () -> EntitlementFailure? in
            do throws(EntitlementFailure) {
                try await enabler.authenticate(forceAuthn: true)
                return nil
            } catch {
                return error
            }
        }
        let navigations = session.ledger.callbacks.filter { $0.name == "navigateToUrl" }.count
        #expect(await eventually { session.ledger.callbacks.filter { $0.name == "navigateToUrl" }.count > navigations })
        await enabler.setSelectedProvider(nil)
        await expectEqual(second.value?.code, ErrorCode.providerNotSelected, "a cancelled login fails with its code")
        _ = await session.collect()
        await session.expectClean()
    }


    @Test func theAnsweredStreamSaysWhichCallsEachCallbackAnswers() async throws {
        let session = SimulatedSession()
        let stream = await session.enabler.answeredCallbacks()
        await session.configure()
        let first = await session.enabler.getAuthentication()
        let second = await session.enabler.getAuthentication()  // joins the running login
        let choose = await session.enabler.setSelectedProvider("acme-cable")
        _ = await session.logIn(as: "alice", password: "wonderland")
        _ = await session.collect()
        var seen: [AnsweredCallback] = []
        for await item in stream {
            seen.append(item)
            if case .setAuthenticationStatus = item.callback { break }
        }
        #expect(seen.first?.callback == .setRequestorComplete(success: true) && seen.first?.answering.count == 1)
        #expect(seen.contains { if case .navigateToUrl = $0.callback { $0.answering.isEmpty } else { false } }, "a step, not an answer")
        let ended = try #require(seen.last)
        expectEqual(ended.callback, .setAuthenticationStatus(status: 1, errorCode: ""))
        #expect(Set(ended.answering).isSuperset(of: [first, second, choose]), "one status answers the calls that joined")
        await session.expectClean()
    }

    @Test func anyCallsAnswerCanBeAwaited() async throws {
        let session = SimulatedSession()
        await session.configure()
        #expect(try await session.enabler.answer(to: .checkAuthentication)
            == .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        try await expectEqual(session.enabler.answer(to: .getSelectedProvider), .selectedProvider(nil))
        _ = await session.collect()
        await session.expectClean()
    }

    // MARK: - Every wait ends

    /// A login the user never finishes: the caller's time limit ends its wait with a typed failure,
    /// while the call stays accepted — the picker is still open — and is answered once when it ends.
    @Test(.timeLimit(.minutes(10)))
    func aWaitPastItsTimeLimitEndsTypedAndTheCallIsStillAnsweredOnce() async throws {
        let session = SimulatedSession()
        await session.configure()
        let enabler = session.enabler
        let waiting = Task { () -> EntitlementFailure? in
            do throws(EntitlementFailure) {
                _ = try await enabler.authorize("news-channel", within: .seconds(20))
                return nil
            } catch {
                return error
            }
        }
        #expect(await eventually { session.ledger.callbacks.contains { $0.name == "displayProviderDialog" } })
        await session.clock.advance(by: .seconds(19))
        #expect(await Self.stillWaiting(waiting), "before its time limit the wait goes on")
        await session.clock.advance(by: .seconds(1))
        let failure = await waiting.value
        #expect(failure?.code == ErrorCode.callWaitTimedOut && failure?.callback == nil, "\(String(describing: failure))")
        guard case .login(_, .selectingProvider) = await enabler.machineSnapshot.authentication else {
            Issue.record("the wait's end changed the engine: \(await enabler.machineSnapshot.authentication)")
            return
        }
        // The call is still the picker's: the user's choice (here: none) answers it, once.
        await enabler.setSelectedProvider(nil)
        let answers = await session.collectIgnoringTracking().map(\.name)
        expectEqual(answers, ["displayProviderDialog", "setAuthenticationStatus", "tokenRequestFailed"], "\(answers)")
        await session.expectClean()
    }

    /// A request handler whose task is cancelled (its client went away, the server is stopping) stops
    /// waiting at once, for each awaiting entry point.
    @Test(.timeLimit(.minutes(10)), arguments: ["answer", "authorize", "authenticate"])
    func aCancelledWaitEndsAtOnceWithItsCode(_ entryPoint: String) async throws {
        let session = SimulatedSession()
        await session.configure()
        let enabler = session.enabler
        let waiting = Task { () -> EntitlementFailure? in
            do throws(EntitlementFailure) {
                switch entryPoint {
                case "answer": _ = try await enabler.answer(to: .getAuthentication(forceAuthn: false, data: [:]))
                case "authorize": _ = try await enabler.authorize("news-channel")
                default: try await enabler.authenticate()
                }
                return nil
            } catch {
                return error
            }
        }
        #expect(await eventually { session.ledger.callbacks.contains { $0.name == "displayProviderDialog" } })
        waiting.cancel()
        await expectEqual(waiting.value?.code, ErrorCode.callWaitCancelled)
        // The engine is as it was: the picker open, its call answered when the user closes it.
        await enabler.setSelectedProvider(nil)
        _ = await session.collect()
        await session.expectClean()
        #expect(await enabler.rest() != nil, "no waiter is left behind to keep the engine from rest")
    }

    /// A plain call made from a cancelled task is accepted and runs as any other: the engine's work runs
    /// on a task of its own, so a store that gives up when its task is cancelled (as a Redis client
    /// does) still loads and saves, and the callbacks are the ones an uncancelled caller gets.
    @Test func aCallersCancellationNeverReachesTheEnginesWork() async throws {
        let session = SimulatedSession(storage: GivesUpWhenCancelled())
        let enabler = session.enabler
        func fromACancelledTask(_ call: @escaping @Sendable () async -> Void) async {
            await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                await call()
            }.value
        }
        await fromACancelledTask { await enabler.setRequestor("sim-requestor") }
        expectCallbacks(await session.collect(), [.setRequestorComplete(success: true)])
        await fromACancelledTask { await enabler.getAuthentication() }
        await fromACancelledTask { await enabler.setSelectedProvider("acme-cable") }
        let page = try #require(await session.collectIgnoringTracking().lastNavigation, "the login was saved and its page handed out")
        let redirect = await session.redirectURL(from: page)
        await fromACancelledTask { await enabler.handleExternalURL(redirect) }
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        #expect(try await session.storage.load(deviceID: "device-1", requestorID: "sim-requestor").tokens.authentication != nil)
        await session.expectClean()
    }

    /// A store that refuses to work for a cancelled task, as ``RedisClient`` does.
    struct GivesUpWhenCancelled: TokenStorage {
        let inner = InMemoryTokenStorage()

        func refuseIfCancelled() throws(TokenStorageError) {
            if Task.isCancelled { throw .unavailable("the calling task was cancelled") }
        }

        func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
            try refuseIfCancelled()
            return try await inner.load(deviceID: deviceID, requestorID: requestorID)
        }

        func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
            async throws(TokenStorageError) -> StorageVersion
        {
            try refuseIfCancelled()
            return try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        }

        func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
            try refuseIfCancelled()
            return try await inner.version(deviceID: deviceID, requestorID: requestorID)
        }
    }

    /// A task cancelled before it calls makes no call: nothing reaches the engine.
    @Test func aTaskCancelledBeforeTheCallMakesNone() async throws {
        let session = SimulatedSession()
        await session.configure()
        let enabler = session.enabler
        let before = await session.collect().count
        let attempt = Task { () -> EntitlementFailure? in
            withUnsafeCurrentTask { $0?.cancel() }
            do throws(EntitlementFailure) {
                _ = try await enabler.authorize("news-channel")
                return nil
            } catch {
                return error
            }
        }
        await expectEqual(attempt.value?.code, ErrorCode.callWaitCancelled)
        await session.settle()
        await expectEqual(session.collect().count, before, "no callback: the call was never made")
        await expectEqual(enabler.machineSnapshot.authentication, .unauthenticated)
        await session.expectClean()
    }

    /// Whether `task` is still running after the engine had a moment to answer.
    static func stillWaiting<T>(_ task: Task<T, Never>) async -> Bool {
        let done = Finished()
        Task {
            _ = await task.value
            done.set()
        }
        try? await Task.sleep(for: .milliseconds(50))
        return !done.isSet
    }
}

/// A flag one task sets and another reads.
private final class Finished: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}
