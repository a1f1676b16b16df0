import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import EntitlementSupport
import EntitlementTestSupport
import Foundation
import Synchronization
import Testing

@testable import EntitlementRedis

/// Nodes of a fleet on one redis-server: a node killed in the middle of a login and another that
/// finishes it; Redis restarted under a running engine, every call still answered exactly once.
@Suite("Two nodes and a restart on redis-server", RedisServer.trait)
struct RedisTwoNodeTests {
    static var entitle: URL { URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("entitle") }

    /// Starts `entitle session-start redis:PORT --stay` and returns it with the two lines it printed
    /// (the redirect, the simulated service's state), read on a thread of its own.
    static func startNode(port: UInt16) async throws -> (ChildProcess, [String]) {
        let output = Pipe()
        let process = try ChildProcess.spawn(
            entitle.path, ["session-start", "redis:\(port)", "--stay"], output: .descriptor(output.fileHandleForWriting.fileDescriptor))
        try output.fileHandleForWriting.close()
        let lines = await RedisServer.onThread { () -> [String] in
            var text = ""
            while text.filter({ $0 == "\n" }).count < 2 {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            return text.split(separator: "\n").map(String.init)
        }
        return (process, lines)
    }

    /// Two session hosts, each with its own connections to one redis-server (two nodes behind a load
    /// balancer): the login node A started is finished by the redirect reaching node B, and node A's
    /// waiting call is answered at once — it hears B's save — without another call from the device.
    @Test func twoHostsOnRedisAnswerTheFirstNodesWaitingCallWhenTheSecondFinishesTheLogin() async throws {
        let server = try await RedisServer()
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 101)
        let delegateA = Answers(), delegateB = Answers()
        let storeA = RedisTokenStorage(client: RedisClient(server.configuration()), now: { clock.now() })
        let storeB = RedisTokenStorage(client: RedisClient(server.configuration()), now: { clock.now() })
        let nodeA = SessionHost(
            settings: SessionHostSettings(engine: .simulated), backend: simulator.backend, storage: storeA, clock: clock, delegate: delegateA,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID, seed: 1) })
        let nodeB = SessionHost(
            settings: SessionHostSettings(engine: .simulated), backend: simulator.backend, storage: storeB, clock: clock, delegate: delegateB,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID, seed: 2) })
        let key = SessionKey(deviceID: "tv-1", requestorID: "sim-requestor")
        try await nodeA.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
        try await nodeA.call(.setSelectedProvider("acme-cable"), on: key)
        await nodeA.whenSettled(key)
        let url = try #require(delegateA.lastNavigation)
        #expect(
            await RedisTokenStorageTests.subscribed(to: storeA.savesChannel, via: storeB.client, atLeast: 2), "both nodes subscribed")
        let visit = await simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        let finished = try await nodeB.answer(to: .handleExternalURL(try #require(visit.appURL)), on: key)
        expectEqual(finished, .setAuthenticationStatus(status: 1, errorCode: ""), "node B finished the login")
        #expect(
            await eventually { delegateA.last(answering: CallID(2)) == .setAuthenticationStatus(status: 1, errorCode: "") },
            "node A's getAuthentication was answered when node B saved")
        withExtendedLifetime((nodeA, nodeB)) {}
        storeA.client.close()
        storeB.client.close()
        await server.stop()
    }

    /// A host delegate that keeps every callback.
    final class Answers: SessionHostDelegate {
        private let log = Mutex<[(Callback, [CallID])]>([])
        func session(_ key: SessionKey, emitted callback: Callback, answering calls: [CallID]) {
            log.withLock { $0.append((callback, calls)) }
        }
        var lastNavigation: String? {
            log.withLock { log in
                log.reversed().lazy.compactMap { entry -> String? in
                    if case .navigateToUrl(let url) = entry.0 { return url }
                    return nil
                }.first
            }
        }
        func last(answering call: CallID) -> Callback? { log.withLock { $0.last { $0.1.contains(call) }?.0 } }
    }


    @Test func aNodeKilledInTheMiddleOfALoginIsFinishedByAnother() async throws {
        let server = try await RedisServer()
        let (nodeA, lines) = try await Self.startNode(port: server.port)
        expectEqual(lines.count, 2, "node A printed \(lines)")
        let redirect = try #require(lines.first)
        #expect(redirect.hasPrefix("adobepass://ios.app?state="))
        #expect(nodeA.isRunning, "node A is in the middle of its login")
        await RedisServer.kill(nodeA)  // SIGKILL: no chance to clean up
        // Node B: another process's engine and simulator of the same world, the same Redis.
        let client = RedisClient(server.configuration())
        let clock = ManualClock()
        let store = RedisTokenStorage(client: client, now: { clock.now() })
        let b = SimulatedSession(seed: 3, storage: store, clock: clock)
        #expect(await b.simulator.importState(try #require(lines.last)))
        await b.enabler.setRequestor("sim-requestor")
        await b.settle()
        await expectEqual(b.enabler.machineSnapshot.authentication.kind, .awaitingRedirect, "node B took up the login")
        let handled = await b.enabler.handleExternalURL(redirect)
        await b.settle()
        expectEqual(b.ledger.answers(to: handled), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await b.enabler.getAuthorization("sports-live")
        await b.settle()
        #expect(b.ledger.take().contains { $0.name == "setToken" })
        let stored = try await store.load(deviceID: "device-1", requestorID: "sim-requestor")
        #expect(stored.tokens.authentication != nil && stored.tokens.pendingLogin == nil)
        #expect(b.ledger.violations().isEmpty, "\(b.ledger.violations())")
        client.close()
        await server.stop()
    }

    @Test func redisRestartedUnderARunningEngineEveryCallIsAnsweredExactlyOnce() async throws {
        let server = try await RedisServer()
        // A stopped server refuses at once: the command timeout is a loaded machine's room, not the test's subject.
        let client = RedisClient(server.configuration(connectTimeout: .milliseconds(300), commandTimeout: .seconds(60)))
        let clock = ManualClock()
        let session = SimulatedSession(storage: RedisTokenStorage(client: client, now: { clock.now() }), clock: clock)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.setSelectedProvider("acme-cable")
        await session.settle()
        _ = await session.logIn(as: "alice", password: "wonderland")
        #expect(session.ledger.take().contains(.setAuthenticationStatus(status: 1, errorCode: "")))
        await server.stop()
        // Redis is gone: no call is decided on what the engine last read (the store may have moved past it);
        // every call still ends, once, refused with the typed, passing STORAGE_UNAVAILABLE.
        var calls: [CallID] = []
        calls.append(await session.enabler.checkAuthentication())
        calls.append(await session.enabler.getAuthorization("news-channel"))
        calls.append(await session.enabler.getSelectedProvider())
        calls.append(await session.enabler.setSelectedProvider(nil))  // signs out locally: a save
        await session.settle()
        let during = session.ledger.take()
        for call in calls {
            let answers = session.ledger.answers(to: call)
            expectEqual(answers.count, 1, "\(call) answered once: \(during)")
            #expect(answers.allSatisfy { if case .status(let report) = $0 { report.code == ErrorCode.storageUnavailable } else { false } }, "\(answers)")
        }
        // Redis is back (empty: no persistence): the engine goes on.
        let again = try await RedisServer.restart(on: server.port)
        await session.enabler.setRequestor("sim-requestor")
        await session.settle()
        let check = await session.enabler.checkAuthentication()
        await session.settle()
        expectEqual(session.ledger.answers(to: check), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        _ = session.ledger.take()
        #expect(session.ledger.violations().isEmpty, "\(session.ledger.violations())")
        client.close()
        await RedisServer.kill(again)
    }
}
