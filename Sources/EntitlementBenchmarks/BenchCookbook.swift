import EntitlementEngine
import EntitlementSimulator
import EntitlementTracing
import Synchronization

/// The benchmark's cookbook session — configure, log in through the picker and the MVPD page, authorize,
/// pre-authorize, read metadata, authorize again, log out through the MVPD — on the engine, and the same
/// simulator calls made in straight-line code (the baseline the engine's overhead is measured against).
enum BenchCookbook {
    /// One request and its answer.
    struct Exchange: Equatable {
        let request: BackendRequest
        let result: Result<BackendResponse, BackendError>
    }

    /// What one engine session did: the backend requests with their answers, and the pages visited.
    struct Work: Equatable {
        var exchanges: [Exchange] = []
        var visits: [String] = []
    }

    /// Records what the engine's session did, to check that the baseline does the same.
    final class Log: Sendable {
        let work = Mutex(Work())
        let requests = Mutex<[BackendRequest]>([])
    }

    /// Passes requests to the simulator; with a log, records each request and its answer.
    struct LoggingBackend: EntitlementBackend {
        let inner: any EntitlementBackend
        let log: Log?

        func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
            let result: Result<BackendResponse, BackendError>
            do throws(BackendError) { result = .success(try await inner.perform(request)) } catch { result = .failure(error) }
            if let log {
                log.requests.withLock { $0.append(request) }
                log.work.withLock { $0.exchanges.append(Exchange(request: request, result: result)) }
            }
            return try result.get()
        }
    }

    /// Keeps the last URL to open and counts media tokens (the session's sanity check); nothing else.
    final class Delegate: AccessEnablerDelegate {
        let lastURL = Mutex<String?>(nil)
        let tokens = Mutex(0)
        func navigateToUrl(_ url: String) { lastURL.withLock { $0 = url } }
        func setToken(_ token: String, forResource resource: String) { tokens.withLock { $0 += 1 } }
    }

    /// One cookbook session on a fresh engine and simulator; nil if the session did not go as scripted.
    /// With `executor`, the session runs on it: the caller prefers it and so do the engine's tasks.
    static func engineSession(
        monitor: (any EngineMonitor)? = nil, recorder: TraceRecorder? = nil, log: Log? = nil, executor: ThreadExecutor? = nil
    ) async -> (enabler: AccessEnabler, work: Work, mediaTokens: Int)? {
        guard let executor else { return await engineSession(monitor: monitor, recorder: recorder, log: log, taskExecutor: nil) }
        return await withTaskExecutorPreference(executor) {
            await engineSession(monitor: monitor, recorder: recorder, log: log, taskExecutor: executor)
        }
    }

    private static func engineSession(
        monitor: (any EngineMonitor)?, recorder: TraceRecorder?, log: Log?, taskExecutor: (any TaskExecutor)?
    ) async -> (enabler: AccessEnabler, work: Work, mediaTokens: Int)? {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 101)
        let delegate = Delegate()
        var environment = EngineEnvironment.deterministic(clock: clock, deviceID: "device-1")
        environment.taskExecutor = taskExecutor
        let enabler = AccessEnabler(
            backend: LoggingBackend(inner: simulator.backend, log: log), delegate: delegate, storage: InMemoryTokenStorage(),
            environment: environment, settings: .simulated, monitor: monitor, recorder: recorder)
        var visits: [String] = []
        await enabler.setRequestor("sim-requestor")
        await enabler.whenIdle()
        await enabler.getAuthorization("sports-live")
        await enabler.setSelectedProvider("acme-cable")
        await enabler.whenIdle()
        guard let login = delegate.lastURL.withLock({ $0 }) else { return nil }
        visits.append(login)
        let visit = await simulator.userAgent.logIn(at: login, username: "alice", password: "wonderland")
        guard let back = visit.appURL else { return nil }
        await enabler.handleExternalURL(back)
        await enabler.whenIdle()
        await enabler.checkPreauthorizedResources(["news-channel", "sports-live", "movies-hd"])
        await enabler.whenIdle()
        await enabler.getAuthorization("news-channel")
        await enabler.whenIdle()
        await enabler.getMetadata(.userMetadata("zip"))
        await enabler.logout()
        await enabler.whenIdle()
        guard let logout = delegate.lastURL.withLock({ $0 }), logout != login else { return nil }
        visits.append(logout)
        guard let done = await simulator.userAgent.follow(logout).appURL else { return nil }
        await enabler.handleExternalURL(done)
        await enabler.whenIdle()
        var work = log?.work.withLock { $0 } ?? Work()
        work.visits = visits
        return (enabler, work, delegate.tokens.withLock { $0 })
    }

    /// An engine configured for the simulator's requestor with a login stored (as a device that signed in
    /// earlier finds it): what `checkAuthentication` is timed on. Nil if it does not read as signed in.
    static func signedInEngine(delegate: (any AccessEnablerDelegate)? = nil) async -> AccessEnabler? {
        let clock = ManualClock()
        let storage = InMemoryTokenStorage()
        let login = AuthenticationToken(
            mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "bench-user", expires: clock.now().adding(.seconds(86_400)))
        guard (try? await storage.save(
            StoredTokens(authentication: login, deviceID: "device-1"), deviceID: "device-1", requestorID: "sim-requestor", replacing: .absent))
            != nil
        else { return nil }
        let enabler = AccessEnabler(
            backend: Simulator(world: .default, clock: clock, seed: 101).backend, delegate: delegate, storage: storage,
            environment: .deterministic(clock: clock, deviceID: "device-1"), settings: .simulated)
        await enabler.setRequestor("sim-requestor")
        await enabler.whenIdle()
        guard case .setAuthenticationStatus(1, _)? = try? await enabler.answer(to: .checkAuthentication) else { return nil }
        return enabler
    }

    /// ``straightLine(_:visits:logging:)`` run on `executor` (the baseline for a session run there).
    static func straightLine(_ requests: [BackendRequest], visits: [String], on executor: ThreadExecutor) async -> Work {
        await withTaskExecutorPreference(executor) { await straightLine(requests, visits: visits, logging: false) }
    }

    /// The same simulator work in straight-line code: `requests` in order against a fresh simulator,
    /// and the same two page visits (login and logout). Returns what it did, to compare.
    static func straightLine(_ requests: [BackendRequest], visits: [String], logging: Bool) async -> Work {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 101)
        let backend = simulator.backend
        var work = Work()
        var visited = 0
        for request in requests {
            let result: Result<BackendResponse, BackendError>
            do throws(BackendError) { result = .success(try await backend.perform(request)) } catch { result = .failure(error) }
            if logging { work.exchanges.append(Exchange(request: request, result: result)) }
            // The login page is visited after the session is created; the logout page after the logout request.
            if visited < visits.count, Self.visitFollows(request, index: visited) {
                _ = visited == 0
                    ? await simulator.userAgent.logIn(at: visits[0], username: "alice", password: "wonderland")
                    : await simulator.userAgent.follow(visits[1])
                visited += 1
            }
        }
        work.visits = Array(visits.prefix(visited))
        return work
    }

    /// Whether the page visit number `index` comes right after `request` in the engine's session.
    static func visitFollows(_ request: BackendRequest, index: Int) -> Bool {
        switch (request.operation, index) {
        case (.createSession, 0), (.logout, 1): true
        default: false
        }
    }
}
