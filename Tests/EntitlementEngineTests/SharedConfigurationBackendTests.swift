import EntitlementEngine
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
import Testing

/// One configuration request for every engine of a process while it is valid; at most one fetch in
/// flight; failures never kept; a cancelled caller leaves at once; a hung fetch is abandoned.
@Suite("Shared configuration")
struct SharedConfigurationBackendTests {
    static let requestor = "sim-requestor"

    /// Two engines (two devices) configure the same requestor: the service is asked once.
    @Test(.timeLimit(.minutes(10)))
    func twoEnginesShareOneConfigurationRequest() async throws {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 7)
        let shared = SharedConfigurationBackend(simulator.backend, validity: .seconds(120), clock: clock)
        let engines = ["tv-1", "tv-2"].map { device in
            AccessEnabler(backend: shared, environment: .deterministic(clock: clock, deviceID: device), settings: .simulated)
        }
        for engine in engines {
            #expect(try await engine.answer(to: .setRequestor(requestorID: Self.requestor, serviceProviders: []))
                == .setRequestorComplete(success: true))
        }
        expectEqual(shared.configurationFetches, 1, "one request for two engines")
        // Past its validity a configuration is fetched again (a changed one reaches the engines).
        await clock.advance(by: .seconds(120))
        let third = AccessEnabler(backend: shared, environment: .deterministic(clock: clock, deviceID: "tv-3"), settings: .simulated)
        #expect(try await third.answer(to: .setRequestor(requestorID: Self.requestor, serviceProviders: []))
            == .setRequestorComplete(success: true))
        expectEqual(shared.configurationFetches, 2)
        // Other requests pass through: a login creates its session at the service.
        await engines[0].getAuthentication()
        await engines[0].setSelectedProvider("acme-cable")
        await engines[0].whenIdle()
        guard case .login(_, .awaitingRedirect) = await engines[0].machineSnapshot.authentication else {
            Issue.record("no session created: \(await engines[0].machineSnapshot.authentication)")
            return
        }
    }

    /// A failure is handed to the callers of that fetch and never kept: the next caller fetches again.
    @Test(.timeLimit(.minutes(10)))
    func aFailureIsNeverKept() async throws {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 7)
        let shared = SharedConfigurationBackend(simulator.backend, clock: clock)
        await simulator.inject(.fail(.network("connection refused")), into: .configuration, times: 1)
        let request = BackendRequest.configuration(RequestContext(requestorID: Self.requestor, deviceID: "tv-1", options: [:]))
        await #expect(throws: BackendError.network("connection refused")) { try await shared.perform(request) }
        let answer = try await shared.perform(request)
        guard case .configuration = answer else {
            Issue.record("not a configuration: \(answer)")
            return
        }
        expectEqual(shared.configurationFetches, 2)
        _ = try await shared.perform(request)
        expectEqual(shared.configurationFetches, 2, "the answer is kept")
    }

    /// Callers that ask while a fetch is in flight wait for it (one request); one whose task is cancelled
    /// stops waiting at once, and the fetch goes on for the others.
    @Test(.timeLimit(.minutes(10)))
    func callersJoinTheFetchInFlightAndACancelledOneLeavesAtOnce() async throws {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 7)
        let gate = Gate(simulator.backend)
        let shared = SharedConfigurationBackend(gate, clock: clock)
        let request = BackendRequest.configuration(RequestContext(requestorID: Self.requestor, deviceID: "tv-1", options: [:]))
        let first = Task { try await shared.perform(request) }
        let second = Task { try await shared.perform(request) }
        let leaving = Task { try await shared.perform(request) }
        while gate.waiting < 1 { await Task.yield() }
        try await Task.sleep(for: .milliseconds(20))
        leaving.cancel()
        await #expect(throws: BackendError.timeout) { try await leaving.value }
        gate.open()
        for caller in [first, second] {
            guard case .configuration = try await caller.value else {
                Issue.record("not a configuration")
                return
            }
        }
        #expect(shared.configurationFetches == 1 && gate.requests == 1, "one fetch for three callers")
    }

    /// A service that never answers holds no caller past the fetch timeout: the next caller abandons the
    /// hung fetch and fetches again.
    @Test(.timeLimit(.minutes(10)))
    func aHungFetchIsAbandonedAfterItsTimeout() async throws {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 7)
        let gate = Gate(simulator.backend)
        let shared = SharedConfigurationBackend(gate, fetchTimeout: .seconds(30), clock: clock)
        let request = BackendRequest.configuration(RequestContext(requestorID: Self.requestor, deviceID: "tv-1", options: [:]))
        let stuck = Task { try await shared.perform(request) }
        while gate.waiting < 1 { await Task.yield() }
        await clock.advance(by: .seconds(30))
        gate.answerFromNowOn()
        guard case .configuration = try await shared.perform(request) else {
            Issue.record("not a configuration")
            return
        }
        await #expect(throws: BackendError.timeout, "the abandoned fetch's caller is told") { try await stuck.value }
        expectEqual(shared.configurationFetches, 2)
    }
}

/// A backend whose configuration answers wait until the test opens it (or answers at once from then on).
private final class Gate: EntitlementBackend {
    private let inner: any EntitlementBackend
    private let state = Mutex<(open: Bool, requests: Int, waiting: [CheckedContinuation<Void, Never>])>((false, 0, []))

    init(_ inner: any EntitlementBackend) { self.inner = inner }

    var waiting: Int { state.withLock { $0.waiting.count } }
    var requests: Int { state.withLock { $0.requests } }

    func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        await withCheckedContinuation { continuation in
            let go = state.withLock { state -> Bool in
                state.requests += 1
                if state.open { return true }
                state.waiting.append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
        return try await inner.perform(request)
    }

    /// Lets every waiting request through, and every later one.
    func open() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    /// Later requests answer at once; those waiting now stay stuck.
    func answerFromNowOn() { state.withLock { $0.open = true } }
}
