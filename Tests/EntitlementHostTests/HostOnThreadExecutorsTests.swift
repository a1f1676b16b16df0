import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
import Testing

/// The production checklist's recipe: executors per core, each session's environment naming the one
/// its key picks, each call made under that executor's preference. A login and an authorization then
/// run on the picked executor's thread, the host's own work included.
@Suite("A host whose sessions run on thread executors")
struct HostOnThreadExecutorsTests {
    static func currentThread() -> UInt { ThreadNotingBackend.currentThread }

    final class Browser: SessionHostDelegate {
        let loginURL = Mutex<String?>(nil)
        func session(_ key: SessionKey, emitted callback: Callback, answering calls: [CallID]) {
            if case .navigateToUrl(let url) = callback { loginURL.withLock { $0 = url } }
        }
    }

    @Test func aLoginAndAnAuthorizationRunOnTheExecutorTheKeyPicks() async throws {
        let executors = [try ThreadExecutor(), try ThreadExecutor()]
        defer { for executor in executors { executor.shutdown() } }
        @Sendable func executor(for key: SessionKey) -> ThreadExecutor {
            executors[Int(key.deviceID.utf8.reduce(0) { $0 &+ UInt32($1) } % UInt32(executors.count))]
        }
        let clock = ManualClock()
        let simulator = Simulator(clock: clock)
        let backend = ThreadNotingBackend(simulator.backend)
        let browser = Browser()
        let host = SessionHost(
            settings: SessionHostSettings(engine: .simulated), backend: backend, clock: clock, delegate: browser,
            environment: { key in
                var environment = EngineEnvironment.deterministic(clock: clock, deviceID: key.deviceID)
                environment.taskExecutor = executor(for: key)
                return environment
            })
        let key = SessionKey(deviceID: "tv-7", requestorID: "sim-requestor")
        let picked = executor(for: key)
        let executorThread = await Task(executorPreference: picked) { Self.currentThread() }.value
        let token = try await withTaskExecutorPreference(picked) { () async throws -> String in
            try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
            try await host.call(.setSelectedProvider("acme-cable"), on: key)
            while browser.loginURL.withLock({ $0 }) == nil { await host.whenSettled(key) }
            let visit = await simulator.userAgent.logIn(
                at: browser.loginURL.withLock { $0 }!, username: "alice", password: "wonderland")
            expectEqual(Self.currentThread(), executorThread)
            try await host.call(.handleExternalURL(try #require(visit.appURL)), on: key)
            let token = try await host.authorize("news-channel", on: key)
            expectEqual(Self.currentThread(), executorThread)
            return token
        }
        #expect(!token.isEmpty)
        let requests = backend.requests
        // The host fetches a requestor's configuration once for all its sessions, on the shared pool.
        let sessionRequests = requests.filter { $0.operation != .configuration }
        #expect(sessionRequests.count >= 3, "\(requests.map { "\($0.operation)" })")
        #expect(
            sessionRequests.allSatisfy { $0.thread == executorThread },
            "\(requests.map { "\($0.operation) on \($0.thread)" }), executor \(executorThread)")
        await expectEqual(host.shutdown(gracePeriod: .seconds(30)), SessionShutdownReport(settled: 1, stillBusy: 0))
    }
}
