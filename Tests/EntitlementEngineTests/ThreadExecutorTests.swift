import EntitlementEngine
import EntitlementSimulator
import Testing

/// A session whose caller and engine prefer one ``ThreadExecutor`` runs on that thread alone, answers
/// every call as on the shared pool, and a stopped executor strands no task.
@Suite("One thread's executor")
struct ThreadExecutorTests {
    static func currentThread() -> UInt { ThreadNotingBackend.currentThread }

    @Test func aTaskThatPrefersItRunsOnItsThreadAcrossSuspensions() async throws {
        let executor = try ThreadExecutor()
        defer { executor.shutdown() }
        actor Counter {
            var value = 0
            func bump() -> UInt {
                value += 1
                return ThreadExecutorTests.currentThread()
            }
        }
        let counter = Counter()
        let seen = await withTaskExecutorPreference(executor) { () async -> Set<UInt> in
            var seen: Set<UInt> = [Self.currentThread()]
            for _ in 0..<50 {
                seen.insert(await counter.bump())  // a default actor runs where the caller prefers
                await Task.yield()
                seen.insert(Self.currentThread())
            }
            return seen
        }
        #expect(seen.count == 1, "one thread ran it all: \(seen.count) threads")
        #expect(!seen.contains(Self.currentThread()), "and it was the executor's, not the test's")
        #expect(await counter.value == 50)
    }

    @Test func aSessionOnItAnswersEveryCallAndItsRequestsRunThere() async throws {
        let executor = try ThreadExecutor()
        defer { executor.shutdown() }
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 101)
        let backend = ThreadNotingBackend(simulator.backend)
        let session = SimulatedSession(clock: clock, simulator: simulator, backend: backend, taskExecutor: executor)
        let callerThreads = await withTaskExecutorPreference(executor) { () async -> Set<UInt> in
            var threads: Set<UInt> = [Self.currentThread()]
            await session.signIn()
            threads.insert(Self.currentThread())
            await session.enabler.getAuthorization("sports-live")
            let callbacks = await session.collectIgnoringTracking()
            threads.insert(Self.currentThread())
            guard case .setToken(_, let resource)? = callbacks.last else {
                Issue.record("no media token: \(callbacks.map(\.redactedDescription))")
                return threads
            }
            #expect(resource == "sports-live")
            return threads
        }
        await session.expectClean()
        let requestThreads = Set(backend.requests.map(\.thread))
        #expect(callerThreads.count == 1)
        #expect(requestThreads == callerThreads, "every backend request ran on the executor's thread")
    }

    @Test func aTaskThatPrefersAStoppedExecutorStillRuns() async throws {
        let executor = try ThreadExecutor()
        let before = await Task(executorPreference: executor) { Self.currentThread() }.value
        executor.shutdown()
        executor.shutdown()  // a second stop changes nothing
        let after = await Task(executorPreference: executor) { () async -> UInt in
            await Task.yield()
            return Self.currentThread()
        }.value
        #expect(after != before, "the shared pool ran it: the executor's thread has ended")
    }
}
