import EntitlementEngine
import EntitlementTestSupport
import EntitlementSimulator
import Testing

/// The test tools' waits for requests that may never come — the simulator's held requests, the stepped
/// backend's and the provider gate's parked ones — end with the waiting task: a test with a time limit, or a
/// cancelled run, does not wait forever. Each wait is cancelled before it begins and after it began (the
/// task yields first); either way it returns.
@Suite("The test tools' waits end with their task", .timeLimit(.minutes(1)))
struct WaitCancellationTests {
    /// A request nobody sends.
    static let neverSent: Set<OperationID> = [OperationID(99, owner: .authorization)]

    @Test(arguments: [0, 8])
    func aWaitForAHeldRequestEndsWhenItsTaskIsCancelled(yields: Int) async {
        let simulator = SimulatedSession().simulator
        await simulator.hold(.authorize)
        let wait = Task {
            for _ in 0..<yields { await Task.yield() }
            await simulator.whenWaiting(.authorize)
        }
        wait.cancel()
        await wait.value
        expectEqual(await simulator.waitingCount(.authorize), 0)
    }

    @Test(arguments: [0, 8])
    func aWaitForAParkedRequestEndsWhenItsTaskIsCancelled(yields: Int) async {
        let stepped = SteppedBackend(SimulatedSession().simulator.backend)
        let wait = Task {
            for _ in 0..<yields { await Task.yield() }
            await stepped.whenParked(Self.neverSent)
        }
        wait.cancel()
        await wait.value
        expectEqual(await stepped.nextDeliverable(), nil)
    }

    @Test(arguments: [0, 8])
    func aWaitForAParkedProviderRequestEndsWhenItsTaskIsCancelled(yields: Int) async {
        let gate = SteppedProviders()
        let wait = Task {
            for _ in 0..<yields { await Task.yield() }
            await gate.whenParked([99])
        }
        wait.cancel()
        await wait.value
        expectEqual(await gate.next(), nil)
    }

    /// A wait whose condition comes to hold still returns as before: the stepped backend's parked request
    /// lets its watcher go.
    @Test func aWaitForAParkedRequestReturnsWhenItParks() async throws {
        let stepped = SteppedBackend(SimulatedSession().simulator.backend)
        let operation = OperationID(1, owner: .configuration)
        let parked = Task { await stepped.whenParked([operation]) }
        let request = Task {
            try? await stepped.perform(.configuration(RequestContext(requestorID: "sim-requestor", deviceID: "device-1")), operation: operation)
        }
        await parked.value
        expectEqual(await stepped.nextDeliverable(), operation)
        await stepped.sever()
        _ = await request.value
    }
}
