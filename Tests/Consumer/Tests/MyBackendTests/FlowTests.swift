import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import Foundation
import MyBackend
import Synchronization
import Testing

final class App: AccessEnablerDelegate {
    let urls = Mutex<[String]>([])
    let tokens = Mutex<[String]>([])
    func navigateToUrl(_ url: String) { urls.withLock { $0.append(url) } }
    func setToken(_ token: String, forResource resource: String) { tokens.withLock { $0.append(resource) } }
}

@Test func aSessionLogsInAndPlays() async {
    let session = SimulatedSession()
    await session.enabler.setRequestor("sim-requestor")
    await session.enabler.getAuthorization("sports-live")
    await session.enabler.setSelectedProvider("acme-cable")
    await session.settle()
    await session.logIn(as: "alice", password: "wonderland")
    let callbacks = session.ledger.take()
    #expect(callbacks.last?.name == "setToken")
    #expect(session.ledger.violations().isEmpty)
}

@Test func myOwnDelegateOnTheSimulator() async throws {
    let clock = ManualClock()
    let simulator = Simulator(clock: clock)
    let app = App()
    let watcher = Watcher()
    let enabler = AccessEnabler(
        backend: V2Client.simulated(simulator), delegate: app, environment: .deterministic(clock: clock), settings: .simulated, monitor: watcher)
    await enabler.setRequestor("sim-requestor")
    await enabler.setSelectedProvider("acme-cable")
    await enabler.whenIdle()
    let url = try #require(app.urls.withLock { $0.last })
    let visit = await simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
    await enabler.handleExternalURL(try #require(visit.appURL))
    await enabler.whenIdle()
    let token = try await enabler.authorize("sports-live", within: .seconds(30))
    #expect(!token.isEmpty)
    #expect(watcher.lines.withLock { $0 }.contains { $0.contains("→ createSession") })
    #expect(watcher.lines.withLock { $0 }.contains { $0.hasPrefix("row ") })
}

@Test func aHostOnTheSimulator() async throws {
    let clock = ManualClock()
    let simulator = Simulator(clock: clock)
    let devices = Devices()
    let host = SessionHost(
        settings: SessionHostSettings(engine: .simulated), backend: V2Client.simulated(simulator), clock: clock, delegate: devices,
        environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
    let key = SessionKey(deviceID: "tv-1", requestorID: "sim-requestor")
    let answer = try await host.answer(to: .checkAuthentication, on: key, within: .seconds(30))
    #expect(answer.name == "setAuthenticationStatus")
    _ = await host.shutdown(gracePeriod: .seconds(1))
}

/// The Redis server `.ci/run` starts for this package (`ENTITLE_CONSUMER_REDIS`, a `redis://` URL).
let redisURL = ProcessInfo.processInfo.environment["ENTITLE_CONSUMER_REDIS"]

@Test(.enabled(if: redisURL != nil, "needs ENTITLE_CONSUMER_REDIS"))
func twoNodesOnARealRedis() async throws {
    let redisURL = try #require(redisURL)
    let clock = SystemClock()
    let simulator = Simulator(clock: clock)
    let a = try await fleetHost(adobe: V2Client.simulated(simulator), redisURL: redisURL, devices: Devices())
    let b = try await fleetHost(adobe: V2Client.simulated(simulator), redisURL: redisURL, devices: Devices())
    let key = SessionKey(deviceID: "tv-9", requestorID: "sim-requestor")
    _ = try await a.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: []), on: key, within: .seconds(30))
    guard case .openPage(let url) = try await a.interact(.setSelectedProvider("acme-cable"), on: key, within: .seconds(30)) else {
        Issue.record("no page"); return
    }
    let visit = await simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
    let done = try await b.answer(to: .handleExternalURL(try #require(visit.appURL)), on: key, within: .seconds(30))
    #expect(done == .setAuthenticationStatus(status: 1, errorCode: ""))
    let token = try await a.authorize("sports-live", on: key, within: .seconds(30))
    #expect(!token.isEmpty)
    _ = await a.shutdown(gracePeriod: .seconds(1)); _ = await b.shutdown(gracePeriod: .seconds(1))
}
