@testable import EntitlementCore
@testable import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTestSupport
import Testing

/// An engine at rest as a value: as small as it can be, and whole again when it resumes.
@Suite("Engines at rest")
struct EngineRestTests {
    /// After a login every save has completed, so the saved-token snapshot is what the state itself would
    /// save: the rest leaves it out, and the resumed engine has it back — it saves nothing again.
    @Test func aRestingEngineLeavesOutWhatItRebuildsAndResumesWhole() async throws {
        let session = SimulatedSession()
        await session.signIn()
        let stored = try await session.storage.load(deviceID: "device-1", requestorID: "sim-requestor")
        let rest = try #require(await session.enabler.rest())

        expectEqual(rest.parts.machine.persisted, .empty, "the snapshot is left out of the resting value")
        expectEqual(rest.machine.persisted, stored.tokens, "and rebuilt exactly")
        expectEqual(rest.machine.persisted, rest.machine.storedTokens)

        let resumed = AccessEnabler(resuming: rest, backend: session.simulator.backend, storage: session.storage)
        let answer = try await resumed.answer(to: .checkAuthentication)
        expectEqual(answer, .setAuthenticationStatus(status: 1, errorCode: ""))
        let after = try await session.storage.load(deviceID: "device-1", requestorID: "sim-requestor")
        expectEqual(after.version, stored.version, "the resumed engine knows its tokens are saved and saves nothing")
        await expectEqual(resumed.machineSnapshot.persisted, stored.tokens)
    }

    /// A machine whose snapshot differs from its state (the tokens were never saved) keeps it at rest.
    @Test func aSnapshotThatDiffersFromTheStateIsKept() {
        var machine = EntitlementMachine(deviceID: "device-1")
        machine.persisted = StoredTokens(selectedProvider: "acme-cable", deviceID: "device-1")
        let resting = machine.resting()
        expectEqual(resting.persisted, machine.persisted)
        expectEqual(resting.resumed().persisted, machine.persisted)
    }
}

extension EngineRestTests {
    /// A collection emptied by the last inputs keeps its storage (a removal from a shared dictionary
    /// copies it, capacity and all); at rest an empty one holds none.
    @Test func aRestingMachineHoldsNoStorageForEmptyCollections() {
        var machine = EntitlementMachine(deviceID: "device-1")
        machine.requestsSent.reserveCapacity(16)
        machine.authorizations.reserveCapacity(16)
        machine.queue.reserveCapacity(16)
        machine.preauthorizations.reserveCapacity(16)
        machine.authorizationExpiries.reserveCapacity(16)
        machine.preauthorizationCache.reserveCapacity(16)
        machine.options.reserveCapacity(16)
        let rest = machine.resting()
        #expect(machine.requestsSent.capacity >= 16, "the machine that runs keeps its capacity")
        #expect(
            [
                rest.requestsSent.capacity, rest.authorizations.capacity, rest.queue.capacity, rest.preauthorizations.capacity,
                rest.authorizationExpiries.capacity, rest.preauthorizationCache.capacity, rest.options.capacity,
            ] == [0, 0, 0, 0, 0, 0, 0])
    }
}

extension EngineRestTests {
    /// Every wait ends: a task waiting for the engine to be idle or at rest while a backend answer is
    /// held returns once it is cancelled (and the engine goes on, idle once the answer comes).
    @Test(arguments: ["idle", "at rest"])
    func aWaitForTheEngineEndsWhenItsTaskIsCancelled(_ wait: String) async throws {
        let session = SimulatedSession()
        await session.configure()
        await session.simulator.hold(.createSession)
        await session.enabler.setSelectedProvider("acme-cable")
        await session.simulator.whenWaiting(.createSession)
        let enabler = session.enabler
        let waiting = Task { wait == "idle" ? await enabler.whenIdle() : await enabler.whenAtRest() }
        try await Task.sleep(for: .milliseconds(50))  // suspended in its wait, most likely: the cancellation handler ends it
        waiting.cancel()
        let ended = await withTaskGroup(of: Bool.self) { group in
            group.addTask { await waiting.value; return true }
            group.addTask { try? await Task.sleep(for: .seconds(10)); return false }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        #expect(ended, "the cancelled wait returned")
        await session.simulator.releaseAll(.createSession)
        await session.enabler.whenIdle()
        #expect(await session.collect().lastNavigation != nil, "the engine went on: the login page")
    }
}

/// The mailbox's queue against an array doing the same operations.
struct WorkQueueTests {
    @Test(.backgroundThread) func itKeepsTheOrderAnArrayKeeps() {
        var generator = SplitMix64(seed: 3)
        var queue = WorkQueue<Int>()
        var model: [Int] = []
        var next = 0
        for _ in 0..<20_000 {
            switch generator.next() % 5 {
            case 0, 1:
                next += 1
                queue.append(next)
                model.append(next)
            case 2:
                let items = (0..<Int(generator.next() % 3)).map { _ in
                    next += 1
                    return next
                }
                queue.prepend(contentsOf: items)
                model.insert(contentsOf: items, at: 0)
            case 3:
                expectEqual(queue.popFirst(), (model.isEmpty ? nil : model.removeFirst()))
            default:
                if generator.next() % 50 == 0 {
                    queue.removeAll()
                    model.removeAll()
                }
            }
            #expect(queue.count == model.count && queue.isEmpty == model.isEmpty)
        }
        while let first = model.first {
            model.removeFirst()
            expectEqual(queue.popFirst(), first)
        }
        #expect(queue.popFirst() == nil)
    }
}

/// The engine's list of unanswered calls against a set doing the same operations.
struct UnansweredCallsTests {
    @Test(.backgroundThread) func itHoldsWhatASetHoldsInOrder() {
        var generator = SplitMix64(seed: 5)
        var calls = UnansweredCalls()
        var model: Set<CallID> = []
        var next: UInt64 = 0
        for _ in 0..<4_000 {
            switch generator.next() % 6 {
            case 0, 1, 2:
                next += 1
                calls.insert(CallID(next))
                model.insert(CallID(next))
            case 3:
                // An id out of order, or one already noted: put in its place, never twice.
                let id = CallID(generator.next() % (next + 2))
                calls.insert(id)
                model.insert(id)
            case 4:
                // Mostly the oldest call, sometimes any id, sometimes one that is not there.
                let id = generator.next() % 3 == 0 ? CallID(generator.next() % (next + 2)) : (model.min() ?? CallID(0))
                calls.remove(id)
                model.remove(id)
            default:
                if let any = model.randomElement(using: &generator) {
                    calls.remove(any)
                    model.remove(any)
                }
            }
            #expect(calls.inOrder == model.sorted() && calls.isEmpty == model.isEmpty)
        }
        for id in model.shuffled(using: &generator) { calls.remove(id) }
        #expect(calls.isEmpty && calls.inOrder.isEmpty)
    }

    @Test(.backgroundThread) func callsAnsweredOldestFirstLeaveTheRestInOrder() {
        var calls = UnansweredCalls()
        var next: UInt64 = 0
        var oldest: UInt64 = 1
        for round in 0..<3_000 {
            // Three calls in, two answered oldest first: the list grows by one a round.
            for _ in 0..<3 {
                next += 1
                calls.insert(CallID(next))
            }
            for _ in 0..<2 {
                calls.remove(CallID(oldest))
                oldest += 1
            }
            if round % 500 == 0 { #expect(calls.inOrder == (oldest...next).map(CallID.init)) }
        }
        expectEqual(calls.inOrder, (oldest...next).map(CallID.init))
        while oldest <= next {
            calls.remove(CallID(oldest))
            oldest += 1
        }
        #expect(calls.isEmpty && calls.inOrder.isEmpty)
    }
}
