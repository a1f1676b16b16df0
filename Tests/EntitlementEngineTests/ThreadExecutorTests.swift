import Foundation
import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
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
        expectEqual(seen.count, 1, "one thread ran it all: \(seen.count) threads")
        #expect(!seen.contains(Self.currentThread()), "and it was the executor's, not the test's")
        await expectEqual(counter.value, 50)
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
            expectEqual(resource, "sports-live")
            return threads
        }
        await session.expectClean()
        let requestThreads = Set(backend.requests.map(\.thread))
        expectEqual(callerThreads.count, 1)
        expectEqual(requestThreads, callerThreads, "every backend request ran on the executor's thread")
    }

    /// Marks the calling thread (a thread's own dictionary: a thread made later never has the mark, even
    /// when the system gives it the ended thread's id).
    static func markThread() { Thread.current.threadDictionary[markKey] = true }
    static func threadIsMarked() -> Bool { Thread.current.threadDictionary[markKey] != nil }
    static let markKey = "ThreadExecutorTests.executorThread"

    @Test func aTaskThatPrefersAStoppedExecutorStillRuns() async throws {
        let executor = try ThreadExecutor()
        let marked = await Task(executorPreference: executor) { () -> Bool in
            Self.markThread()
            return Self.threadIsMarked()
        }.value
        #expect(marked)
        executor.shutdown()
        executor.shutdown()  // a second stop changes nothing
        let onExecutorThread = await Task(executorPreference: executor) { () async -> Bool in
            await Task.yield()
            return Self.threadIsMarked()
        }.value
        #expect(!onExecutorThread, "the shared pool ran it: the executor's thread has ended")
    }
}
