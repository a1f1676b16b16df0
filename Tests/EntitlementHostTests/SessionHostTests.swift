import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import EntitlementTestSupport
import EntitlementTracing
import Synchronization
import Testing

/// The session host: sessions created on first use and configured, callbacks tagged with their session
/// and calls, idle and least-recently-used sessions put to rest and brought back with nothing to tell
/// them apart, a bounded mailbox, close and a graceful shutdown.
@Suite("Session host")
struct SessionHostTests {
    static let requestor = "sim-requestor"

    // MARK: - Transparency

    /// The same script on a plain engine and on a host that puts the session to rest after every step
    /// it can: the same callbacks with the same call ids, and byte for byte the same trace.
    @Test func aSessionPutToRestAfterEveryStepIsIndistinguishableFromOneThatStayed() async throws {
        let plain = Rig()
        let recorder = TraceRecorder()
        let collector = Collector()
        let enabler = AccessEnabler(
            backend: plain.simulator.backend, delegate: collector.plain, storage: plain.storage,
            environment: .deterministic(clock: plain.clock, deviceID: "device-1"), settings: .simulated, monitor: recorder)
        try await Self.script(plain, lastNavigation: { collector.lastNavigation }) { call in
            let id = await enabler.call(call)
            await enabler.whenIdle()
            return id
        }

        let hosted = Rig()
        let hostRecorder = TraceRecorder()
        let host = hosted.host(idleTimeout: .zero, configures: false, monitor: { _ in hostRecorder })
        let key = SessionKey(deviceID: "device-1", requestorID: Self.requestor)
        var rested = 0
        try await Self.script(hosted, lastNavigation: { hosted.delegate.lastNavigation }) { call in
            let id = try await host.call(call, on: key)
            await host.whenSettled(key)
            rested += await host.evictIdleSessions()
            return id
        }
        let statistics = host.statistics
        // Ten of the fourteen steps leave it at rest; the others leave a redirect pending (login, logout page).
        expectEqual(rested, 10, "the session rested \(rested) times")
        expectEqual(statistics.resumed, rested, "and came back for the next call each time")
        expectEqual(statistics.created, 1)
        expectEqual(hosted.delegate.callbacks(of: key), collector.callbacks, "the delegate saw the same callbacks and call ids")
        expectEqual(hostRecorder.trace.text, recorder.trace.text, "the trace is the same byte for byte")
    }

    /// setRequestor, a login through the picker and the MVPD page, then reads, an authorization and a logout.
    static func script(
        _ rig: Rig, lastNavigation: () -> String?, _ send: (EntitlementCall) async throws -> CallID
    ) async throws {
        _ = try await send(.setRequestor(requestorID: requestor, serviceProviders: []))
        _ = try await send(.checkAuthentication)
        _ = try await send(.getAuthentication(forceAuthn: false, data: [:]))
        _ = try await send(.setSelectedProvider("acme-cable"))
        let url = try #require(lastNavigation())
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        _ = try await send(.handleExternalURL(try #require(visit.appURL)))
        _ = try await send(.checkAuthentication)
        _ = try await send(.getAuthorization(resource: "news-channel", data: [:]))
        _ = try await send(.checkPreauthorizedResources(["news-channel", "sports-live"], cache: true))
        _ = try await send(.getMetadata(.userMetadata("zip")))
        _ = try await send(.getSelectedProvider)
        _ = try await send(.getAuthorization(resource: "sports-live", data: [:]))
        _ = try await send(.logout)
        _ = try await send(.checkAuthentication)
    }

    /// Two hosts on one store are two nodes behind a load balancer: a login started on one is finished
    /// by the redirect arriving at the other, and the first then sees the device signed in.
    @Test func aLoginStartedOnOneHostIsFinishedOnAnother() async throws {
        let rig = Rig()
        let nodeA = rig.host()
        let otherDelegate = RecordingHostDelegate()
        let clock = rig.clock
        let nodeB = SessionHost(
            settings: SessionHostSettings(engine: .simulated), backend: rig.simulator.backend, storage: rig.storage, clock: clock, delegate: otherDelegate,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID, seed: 2) })
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        try await nodeA.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
        try await nodeA.call(.setSelectedProvider("acme-cable"), on: key)
        await nodeA.whenSettled(key)
        let url = try #require(rig.delegate.lastNavigation)
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        let finished = try await nodeB.answer(to: .handleExternalURL(try #require(visit.appURL)), on: key)
        expectEqual(finished, .setAuthenticationStatus(status: 1, errorCode: ""), "node B finished node A's login")
        // The store notifies saves: node A's waiting getAuthentication is answered without another call.
        #expect(await eventually { rig.delegate.answers(of: key).last?.callback == .setAuthenticationStatus(status: 1, errorCode: "") })
        expectEqual(rig.delegate.answers(of: key).last?.answering, [CallID(2), CallID(3)], "node A's getAuthentication and setSelectedProvider")
        try await expectEqual(nodeA.answer(to: .checkAuthentication, on: key), .setAuthenticationStatus(status: 1, errorCode: ""))
        let token = try await nodeA.authorize("news-channel", on: key)
        #expect(!token.isEmpty)
    }

    /// A host's sessions go through its provider chain, and a session that rests keeps what its
    /// providers verified: it answers from that view when it comes back, without asking again.
    @Test func aRestingSessionKeepsWhatItsProvidersVerified() async throws {
        let rig = Rig()
        let kiosk = SimulatedEntitlementProvider(SimulatedWorld.ChainProvider(id: "kiosk", grants: ["issue-1"]))
        let host = rig.host(idleTimeout: .zero, providers: try ProviderChain([.provider(kiosk), .tvProvider]))
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        #expect(try await host.answer(to: .checkPreauthorizedResources(["issue-1", "news-channel"], cache: true), on: key)
            == .preauthorizedResources(["issue-1"]))
        #expect(rig.delegate.entries(of: key).map(\.callback).contains(.entitlementsChanged(["kiosk"])))
        await host.whenSettled(key)
        await expectEqual(host.evictIdleSessions(), 1)
        let before = rig.delegate.entries(of: key).count
        let token = try await host.authorize("issue-1", on: key)
        #expect(token.hasPrefix("kiosk-"), "the resumed session still knows the kiosk claims issue-1")
        expectEqual(host.statistics.resumed, 1)
        let after = rig.delegate.entries(of: key).dropFirst(before).map(\.callback.name)
        expectEqual(after, ["setToken"], "no new setRequestor or verification on resuming: \(after)")
    }

    // MARK: - Lifecycle

    @Test func aNewSessionIsConfiguredAndItsCallbacksCarryItsKeyAndCalls() async throws {
        let rig = Rig()
        let host = rig.host()
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        let answer = try await host.answer(to: .checkAuthentication, on: key)
        expectEqual(answer, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        let seen = rig.delegate.entries(of: key).filter { $0.callback.name != "sendTrackingData" }
        expectEqual(seen.map(\.callback.name), ["setRequestorComplete", "setAuthenticationStatus"])
        expectEqual(seen.map(\.calls), [[CallID(1)], [CallID(2)]], "setRequestor is the session's first call")
        #expect(host.statistics.created == 1 && host.statistics.resident == 1)
        expectEqual(host.residency(of: key), .resident)
    }

    @Test func pastTheResidentLimitTheLeastRecentlyUsedSessionRests() async throws {
        let rig = Rig()
        let host = rig.host(residentLimit: 2)
        let keys = (1...3).map { SessionKey(deviceID: "tv-\($0)", requestorID: Self.requestor) }
        for key in keys.prefix(2) {
            try await host.call(.checkAuthentication, on: key)
            await host.whenSettled(key)
        }
        try await host.call(.checkAuthentication, on: keys[0])  // tv-1 is now more recent than tv-2
        await host.whenSettled(keys[0])
        try await host.call(.checkAuthentication, on: keys[2])
        await host.whenSettled(keys[2])
        expectEqual(host.residency(of: keys[1]), .resting, "the least recently used rested")
        #expect(host.residency(of: keys[0]) == .resident && host.residency(of: keys[2]) == .resident)
        #expect(host.statistics.resident == 2 && host.statistics.resting == 1 && host.statistics.evicted == 1)
        // It comes back on its next call, answering as before.
        let answer = try await host.answer(to: .checkAuthentication, on: keys[1])
        expectEqual(answer, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        expectEqual(host.statistics.resumed, 1)
    }

    @Test func idleSessionsRestOnTheHostsClockButALoginWaitingForItsRedirectStays() async throws {
        let rig = Rig()
        let metrics = Gauges()
        let host = rig.host(idleTimeout: .seconds(60), metrics: metrics)
        let idle = SessionKey(deviceID: "tv-idle", requestorID: Self.requestor)
        let busy = SessionKey(deviceID: "tv-busy", requestorID: Self.requestor)
        try await host.call(.checkAuthentication, on: idle)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: busy)
        try await host.call(.setSelectedProvider("acme-cable"), on: busy)
        await host.whenSettled(idle)
        await host.whenSettled(busy)
        await rig.clock.advance(by: .seconds(61))  // the host's sweep runs
        expectEqual(host.residency(of: idle), .resting)
        expectEqual(host.residency(of: busy), .resident, "a login waiting for its redirect is not at rest")
        #expect(metrics.last("entitle.sessions.resting") == 1 && metrics.last("entitle.sessions.resident") == 1)
        // The login finishes on the resident engine; once it is idle again, the sweep takes it too.
        let url = try #require(rig.delegate.lastNavigation)
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        try await host.call(.handleExternalURL(try #require(visit.appURL)), on: busy)
        await host.whenSettled(busy)
        expectEqual(rig.delegate.callbacks(of: busy).last?.callback, .setAuthenticationStatus(status: 1, errorCode: ""))
        await rig.clock.advance(by: .seconds(121))
        expectEqual(host.residency(of: busy), .resting)
        try await expectEqual(host.answer(to: .checkAuthentication, on: busy), .setAuthenticationStatus(status: 1, errorCode: ""))
        #expect(metrics.total("entitle.sessions.evicted") == 2 && metrics.total("entitle.sessions.resumed") == 1)
    }

    @Test func aFullMailboxRefusesTheNextCallWithoutReachingTheEngine() async throws {
        let rig = Rig()
        let gate = HeldBackend(rig.simulator.backend)
        let host = rig.host(mailboxLimit: 2, backend: gate)
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        try await host.call(.checkAuthentication, on: key)  // configured; the configuration request is held
        let first = Task { try await host.answer(to: .checkAuthentication, on: key) }
        let second = Task { try await host.answer(to: .getSelectedProvider, on: key) }
        // Both answers are awaited (held until configured).
        #expect(await eventually { rig.delegate.entries(of: key).isEmpty && gate.held >= 1 && host.admission(of: key)?.calls == 2 })
        await #expect(throws: SessionHostError.mailboxFull(key, limit: 2)) {
            try await host.call(.checkAuthentication, on: key)
        }
        expectEqual(host.statistics.refused, 1)
        gate.release()
        try await expectEqual(first.value, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        try await expectEqual(second.value, .selectedProvider(nil))
        // The two waiting calls were made from two tasks: they reach the engine in either order.
        let names = rig.delegate.answers(of: key).map(\.callback.name)
        #expect(
            Array(names.prefix(2)) == ["setRequestorComplete", "setAuthenticationStatus"]
                && names.dropFirst(2).sorted() == ["selectedProvider", "setAuthenticationStatus"],
            "setRequestorComplete and the three answers; nothing for the refused call: \(names)")
    }

    @Test func closeWaitsForTheAnswersThenTheSessionReopensFromStorage() async throws {
        let rig = Rig()
        let gate = HeldBackend(rig.simulator.backend)
        let host = rig.host(backend: gate)
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        try await host.call(.checkAuthentication, on: key)
        let closing = Task { await host.close(key) }
        #expect(await eventually { gate.held >= 1 && host.admission(of: key)?.closing == true })
        await #expect(throws: SessionHostError.sessionClosing(key)) { try await host.call(.checkAuthentication, on: key) }
        gate.release()
        #expect(await closing.value)
        expectEqual(rig.delegate.answers(of: key).map(\.callback.name), ["setRequestorComplete", "setAuthenticationStatus"])
        #expect(host.residency(of: key) == nil && host.statistics.closed == 1)
        await expectEqual(host.close(key), false, "closing twice finds nothing")
        _ = try await host.answer(to: .checkAuthentication, on: key)
        expectEqual(host.statistics.created, 2, "a call after close opens the session again")
    }

    /// A caller awaiting a getAuthentication that joined an open picker: close cancels the picker and
    /// answers both (it used to wait for a rest that only the picker's answer could bring).
    @Test(.timeLimit(.minutes(10)))
    func closeCancelsAPickerACallerIsWaitingOn() async throws {
        let rig = Rig()
        let received = CallsReceived()
        let host = rig.host(monitor: { _ in received })
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
        await host.whenSettled(key)
        let waiting = Task { try await host.answer(to: .getAuthentication(forceAuthn: false, data: [:]), on: key) }
        // The second getAuthentication reaches the engine and joins the open picker (closed before it
        // arrives, the session would open again for it, and its picker would wait for a user).
        #expect(await eventually { received.count(of: "getAuthentication") == 2 })
        await host.whenSettled(key)
        #expect(await host.close(key))
        try await expectEqual(waiting.value, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected))
        #expect(host.statistics.closed == 1 && host.residency(of: key) == nil)
    }

    /// A key's description, in every host log line and error, names the device by its pseudonym.
    @Test func aKeysDescriptionNamesTheDeviceByItsPseudonym() {
        let key = SessionKey(deviceID: "planted-device-5512", requestorID: "sim-requestor")
        expectEqual(key.description, "sim-requestor/" + DevicePseudonym.of("planted-device-5512"))
        #expect(!"\(SessionHostError.mailboxFull(key, limit: 1))".contains("planted"))
    }

    /// Each session's tracking data describe its own device, as the host's `device` closure says it.
    @Test func eachSessionsTrackingDataDescribeItsDevice() async throws {
        let rig = Rig()
        let host = rig.host(device: { key in
            key.deviceID == "phone"
                ? V2DeviceInfo(model: "iPhone", version: "15,2", osName: "iOS", osVersion: "18", connectionType: "WiFi", primaryHardwareType: "MobilePhone")
                : nil
        })
        let phone = SessionKey(deviceID: "phone", requestorID: Self.requestor)
        let other = SessionKey(deviceID: "other", requestorID: Self.requestor)
        for key in [phone, other] {
            try await host.call(.checkAuthentication, on: key)
            await host.whenSettled(key)
        }
        func tracking(_ key: SessionKey) -> [String]? {
            rig.delegate.callbacks(of: key).compactMap { if case .sendTrackingData(_, let data) = $0.callback { data } else { nil } }.last
        }
        expectEqual(tracking(phone), ["false", "", "", "", "mobile", "ios", "iOS"])
        expectEqual(tracking(other), ["false", "", "", "", "computer", "swift", "Linux"], "the host's engine settings: .simulated")
    }

    /// A shutdown whose task is cancelled ends its grace period at once (the host's clock never moves
    /// here), and still answers every call of the sessions it closes busy.
    @Test func aCancelledShutdownEndsItsGracePeriodAndStillAnswersEveryCall() async throws {
        let rig = Rig()
        let host = rig.host()
        let login = SessionKey(deviceID: "tv-login", requestorID: Self.requestor)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: login)
        try await host.call(.setSelectedProvider("acme-cable"), on: login)
        await host.whenSettled(login)
        let shutdown = Task { await host.shutdown(gracePeriod: .seconds(3600)) }
        #expect(await eventually { await Self.refusal(of: .checkAuthentication, on: login, by: host) == .shuttingDown })
        shutdown.cancel()
        await expectEqual(shutdown.value, SessionShutdownReport(settled: 0, stillBusy: 1, callsClosed: 2))
        let closedAnswer = rig.delegate.answers(of: login).last
        expectEqual(closedAnswer?.answering, [CallID(2), CallID(3)], "\(String(describing: closedAnswer))")
        #expect(host.residency(of: login) == nil)
    }

    /// `run()` serves until its task is cancelled (as a service group cancels it on a graceful
    /// shutdown), then shuts down with the grace period: a session that settles within it is closed at
    /// rest, not cut off.
    @Test func runServesUntilCancelledThenShutsDownGracefully() async throws {
        let rig = Rig()
        let host = rig.host()
        let quiet = SessionKey(deviceID: "tv-quiet", requestorID: Self.requestor)
        let running = Task { await host.run(gracePeriod: .seconds(5)) }
        try await host.call(.checkAuthentication, on: quiet)
        await host.whenSettled(quiet)
        expectEqual(host.residency(of: quiet), .resident, "serving while it runs")
        running.cancel()
        let report = await running.value
        expectEqual(report, SessionShutdownReport(settled: 1, stillBusy: 0, callsClosed: 0), "\(report)")
        #expect(host.residency(of: quiet) == nil)
        await expectEqual(Self.refusal(of: .checkAuthentication, on: quiet, by: host), .shuttingDown)
    }

    @Test func shutdownRefusesNewCallsAndAnswersTheCallsOfSessionsStillWaitingForARedirect() async throws {
        let rig = Rig()
        let host = rig.host()
        let quiet = SessionKey(deviceID: "tv-quiet", requestorID: Self.requestor)
        let login = SessionKey(deviceID: "tv-login", requestorID: Self.requestor)
        try await host.call(.checkAuthentication, on: quiet)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: login)
        try await host.call(.setSelectedProvider("acme-cable"), on: login)
        await host.whenSettled(quiet)
        await host.whenSettled(login)
        let shutdown = Task { await host.shutdown(gracePeriod: .seconds(5)) }
        #expect(await eventually { await Self.refusal(of: .checkAuthentication, on: quiet, by: host) == .shuttingDown })
        // The shutdown schedules its grace period once it has asked every engine: advance until it ends.
        let finished = Finished()
        Task {
            _ = await shutdown.value
            finished.set()
        }
        for _ in 0..<100 where !finished.isSet {
            await rig.clock.advance(by: .seconds(6))
            try await Task.sleep(for: .milliseconds(10))
        }
        await expectEqual(shutdown.value, SessionShutdownReport(settled: 1, stillBusy: 1, callsClosed: 2))
        // Both sessions are closed; the busy one's waiting calls were answered before shutdown returned.
        #expect(host.residency(of: quiet) == nil && host.residency(of: login) == nil)
        #expect(host.statistics.closed == 2 && host.statistics.resident == 0)
        let closedAnswer = rig.delegate.answers(of: login).last
        #expect(closedAnswer?.callback.name == "status" && closedAnswer?.answering == [CallID(2), CallID(3)], "\(String(describing: closedAnswer))")
        if case .status(let report)? = closedAnswer?.callback { #expect(report.code == ErrorCode.sessionClosed) }
        // The pending login is in the store: a new host (another node) finishes it.
        let stored = try await rig.storage.load(deviceID: "tv-login", requestorID: Self.requestor)
        #expect(stored.tokens.pendingLogin != nil, "the login waiting for its redirect was persisted")
        let nodeB = rig.host()
        let url = try #require(rig.delegate.lastNavigation)
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        #expect(try await nodeB.answer(to: .handleExternalURL(try #require(visit.appURL)), on: login)
            == .setAuthenticationStatus(status: 1, errorCode: ""), "another node finishes the login")
    }
}

// MARK: - Every wait ends, no call is dropped

extension SessionHostTests {
    /// A server's request handler bounds its wait for a login: `authorize` ends at the time limit with a
    /// typed failure; the call stays the session's, and closing the session answers it (once).
    @Test(.timeLimit(.minutes(10)))
    func aHostedWaitEndsAtItsTimeLimitAndCloseStillAnswersTheCall() async throws {
        let rig = Rig()
        let host = rig.host()
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        let waiting = Task { () -> String in
            do {
                _ = try await host.authorize("news-channel", on: key, within: .seconds(25))
                return "authorized"
            } catch let failure as EntitlementFailure {
                return failure.code
            }
        }
        #expect(await eventually { rig.delegate.callbacks(of: key).contains { $0.callback.name == "displayProviderDialog" } })
        await rig.clock.advance(by: .seconds(25))
        try await expectEqual(waiting.value, ErrorCode.callWaitTimedOut)
        #expect(await host.close(key))
        let answers = rig.delegate.answers(of: key).map { "\($0.callback.name) \($0.answering)" }
        #expect(answers.contains("tokenRequestFailed [#2]"), "the authorization is answered when close cancels the picker: \(answers)")
    }

    /// A session that rested with its picker open still has calls waiting for the user: close and
    /// shutdown bring it back and cancel the picker, so they are answered (they used to be dropped).
    @Test(.timeLimit(.minutes(10)), arguments: ["close", "shutdown"])
    func aSessionRestingWithItsPickerOpenIsAnsweredBeforeItLeaves(_ ending: String) async throws {
        let rig = Rig()
        let host = rig.host(idleTimeout: .zero)
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        try await host.call(.getAuthorization(resource: "news-channel", data: [:]), on: key)
        await host.whenSettled(key)
        await expectEqual(host.evictIdleSessions(), 1)
        expectEqual(host.residency(of: key), .resting, "an open picker rests")
        if ending == "close" {
            #expect(await host.close(key))
        } else {
            await expectEqual(host.shutdown(gracePeriod: .seconds(5)), SessionShutdownReport(settled: 1, stillBusy: 0))
        }
        let answers = rig.delegate.answers(of: key).map { "\($0.callback.name) \($0.answering)" }
        #expect(answers.contains("tokenRequestFailed [#2]"), "\(answers)")
        #expect(host.residency(of: key) == nil)
    }

    /// A picker nobody answers is cancelled after the host's provider-choice time limit, resident or
    /// resting, so no hosted call waits on a user for ever.
    @Test(.timeLimit(.minutes(10)), arguments: [false, true])
    func aProviderChoiceNobodyMakesIsCancelledAfterTheHostsLimit(_ rests: Bool) async throws {
        let rig = Rig()
        let clock = rig.clock
        let host = SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(rests ? 30 : 3600), providerChoiceTimeout: .seconds(120), engine: .simulated),
            backend: rig.simulator.backend, storage: rig.storage, clock: clock, delegate: rig.delegate,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
        // The host times the picker from its opening (the dialog), whenever its timer is scheduled.
        #expect(await eventually { rig.delegate.callbacks(of: key).contains { $0.callback.name == "displayProviderDialog" } })
        if rests {
            await host.whenSettled(key)
            await clock.advance(by: .seconds(60))  // the host's idle sweeps put it to rest
            #expect(await eventually { host.residency(of: key) == .resting })
            await clock.advance(by: .seconds(59))
        } else {
            await clock.advance(by: .seconds(119))
        }
        expectEqual(rig.delegate.answers(of: key).count, 1, "only setRequestorComplete before the limit")
        await clock.advance(by: .seconds(1))
        // A timer the host schedules only now (a busy machine) is already due: the clock fires it.
        #expect(
            await eventually {
                await clock.advance(by: .zero)
                return rig.delegate.answers(of: key).last?.callback == .setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected)
            })
        expectEqual(rig.delegate.answers(of: key).last?.answering, [CallID(2)], "the getAuthentication (the host makes no call of its own)")
    }

    /// `entitle fleet`'s TV that "never signed in": node A's picker waits for the user, the device's choice
    /// reaches node B, which shows a registration code, then A's provider-choice limit passes. A follows the
    /// store before it gives anything up: the choice was made, so A shows B's code (and polls it), and no
    /// picker is left to give up. B's code stays in the store, and the user entering it signs the TV in on
    /// both nodes, A's getAuthentication answered too. (Given up as the user's `setSelectedProvider(nil)`,
    /// A's save took B's code out of the store.)
    @Test(.timeLimit(.minutes(10)))
    func aPickerGivenUpOnOneNodeLeavesTheCodeAnotherNodeShows() async throws {
        let rig = Rig()
        let clock = rig.clock
        var engine = EngineSettings.simulated
        engine.secondScreen = SecondScreen(pollInterval: .seconds(5), codeLifetime: .seconds(1800))
        func node(_ delegate: RecordingHostDelegate, seed: UInt64) -> SessionHost {
            SessionHost(
                settings: SessionHostSettings(idleTimeout: .seconds(3600), providerChoiceTimeout: .seconds(120), engine: engine),
                backend: rig.simulator.backend, storage: rig.storage, clock: clock, delegate: delegate,
                environment: { .deterministic(clock: clock, deviceID: $0.deviceID, seed: seed) })
        }
        let nodeA = node(rig.delegate, seed: 1)
        let nodeBDelegate = RecordingHostDelegate()
        let nodeB = node(nodeBDelegate, seed: 2)
        let key = SessionKey(deviceID: "tv-1", requestorID: Self.requestor)
        try await nodeA.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
        #expect(await eventually { rig.delegate.callbacks(of: key).contains { $0.callback.name == "displayProviderDialog" } })
        guard case .showRegistrationCode(let code) = try await nodeB.interact(.setSelectedProvider("acme-cable"), on: key) else {
            Issue.record("node B shows a registration code")
            return
        }
        await clock.advance(by: .seconds(120))
        #expect(
            await eventually {
                await clock.advance(by: .zero)
                return rig.delegate.callbacks(of: key).contains { $0.callback == .status(Notice.registrationCode.report(code)) }
            }, "node A shows node B's code")
        expectEqual(rig.delegate.answers(of: key).map(\.answering), [[CallID(1)]], "nothing given up: node A's getAuthentication (#2) waits")
        let visit = await rig.simulator.userAgent.activate(code: code, username: "alice", password: "wonderland")
        guard case .stoppedAt(let page) = visit.outcome, page.title == "Signed in" else {
            Issue.record("the code was taken: \(visit.outcome)")
            return
        }
        await clock.advance(by: .seconds(5))
        #expect(
            await eventually { nodeBDelegate.answers(of: key).last?.callback == .setAuthenticationStatus(status: 1, errorCode: "") },
            "node B's poll signs the TV in")
        #expect(await eventually { rig.delegate.answers(of: key).last?.answering == [CallID(2)] })
        expectEqual(rig.delegate.answers(of: key).last?.callback, .setAuthenticationStatus(status: 1, errorCode: ""), "node A's getAuthentication")
        try await expectEqual(nodeA.answer(to: .checkAuthentication, on: key), .setAuthenticationStatus(status: 1, errorCode: ""))
    }

    /// A host's sessions share their requestor's configuration: one request for many devices, and
    /// none shared when the setting is off.
    @Test(arguments: [true, false])
    func sessionsShareTheirRequestorsConfiguration(_ shares: Bool) async throws {
        let rig = Rig()
        let counting = CountingBackend(rig.simulator.backend)
        let clock = rig.clock
        let host = SessionHost(
            settings: SessionHostSettings(configurationValidity: shares ? .seconds(120) : nil, engine: .simulated), backend: counting,
            storage: rig.storage, clock: clock, delegate: rig.delegate, environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
        for device in 1...5 {
            let key = SessionKey(deviceID: "tv-\(device)", requestorID: Self.requestor)
            #expect(try await host.answer(to: .checkAuthentication, on: key)
                == .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        }
        expectEqual(counting.configurations, (shares ? 1 : 5))
    }

    /// How the host refused `call`, or nil when it took it.
    static func refusal(of call: EntitlementCall, on key: SessionKey, by host: SessionHost) async -> SessionHostError? {
        do throws(SessionHostError) {
            try await host.call(call, on: key)
            return nil
        } catch {
            return error
        }
    }
}
