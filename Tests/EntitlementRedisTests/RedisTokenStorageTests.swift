import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Foundation
import Synchronization
import Testing

@testable import EntitlementRedis

/// The storage contract on a real redis-server: versioned compare-and-set across store objects
/// (nodes), no version ever reused, keys that expire with their tokens, typed failures when Redis
/// is gone; and two engines on two "nodes" sharing one device session.
@Suite("Redis token store against redis-server", RedisServer.trait)
struct RedisTokenStorageTests {
    static let day = Timestamp(milliseconds: 1_900_000_000_000)

    @Test func aSaveNamingAnOldVersionWritesNothingAndVersionsAreNeverReused() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let store = RedisTokenStorage(client: client)
        let first = StoredTokens(selectedProvider: "a", deviceID: "d")
        let second = StoredTokens(selectedProvider: "b", deviceID: "d")
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), .absent)
        try await expectEqual(store.version(deviceID: "d", requestorID: "r"), .absent)
        let v1 = try await store.save(first, deviceID: "d", requestorID: "r", replacing: .absent)
        #expect(v1 > .absent)
        await #expect(throws: TokenStorageError.conflict(current: v1)) {
            try await store.save(second, deviceID: "d", requestorID: "r", replacing: .absent)
        }
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), VersionedTokens(first, version: v1))
        let v2 = try await store.save(.empty, deviceID: "d", requestorID: "r", replacing: v1)
        let current = try await store.version(deviceID: "d", requestorID: "r")
        #expect(v2 > v1 && current == v2)
        // The key goes away (expired, deleted): the next save starts from absent, with a version never seen before.
        _ = try await client.send(["DEL", store.tokensKey(deviceID: "d", requestorID: "r")])
        let v3 = try await store.save(second, deviceID: "d", requestorID: "r", replacing: .absent)
        #expect(v3 > v2, "a version is never reused, so an engine holding v1 or v2 can never match again")
        // Nor when the server loses everything (restarted empty, or failed over to a replica behind).
        _ = try await client.send(["FLUSHALL"])
        let v4 = try await store.save(first, deviceID: "d", requestorID: "r", replacing: .absent)
        #expect(v4 > v3, "after the store lost its data: \(v4) after \(v3)")
        let v5 = try await store.save(second, deviceID: "d", requestorID: "r", replacing: v4)
        #expect(v5 > v4 && v5.number < 1 << 53)
        client.close()
        await server.stop()
    }

    /// A save that must be held by a replica (`WAIT 1`) and that its connected replica did not acknowledge
    /// in time (the replica lags: here, its process is stopped) is not reported as saved — a failover could
    /// lose it — but as `unavailable`; what the master holds stays readable. On a master with no replica
    /// connected there is nothing to wait for: the save stands.
    /// The engine runs a step's storage calls on the task of whichever caller carries the step: a store
    /// operation asked from a cancelled task still runs to its end (the client alone gives up a
    /// cancelled task's command).
    @Test func anOperationAskedFromACancelledTaskRunsToItsEnd() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let store = RedisTokenStorage(client: client)
        let tokens = StoredTokens(selectedProvider: "a", deviceID: "d")
        let results = await Task { () -> [String] in
            withUnsafeCurrentTask { $0?.cancel() }
            var results: [String] = []
            do throws(TokenStorageError) {
                let saved = try await store.save(tokens, deviceID: "d", requestorID: "r", replacing: .absent)
                results.append("saved \(saved > .absent)")
                results.append("loaded \(try await store.load(deviceID: "d", requestorID: "r") == VersionedTokens(tokens, version: saved))")
                results.append("version \(try await store.version(deviceID: "d", requestorID: "r") == saved)")
                results.append("authentications \(try await store.authentications(deviceID: "d").count)")
            } catch {
                results.append("failed: \(error)")
            }
            return results
        }.value
        expectEqual(results, ["saved true", "loaded true", "version true", "authentications 0"])
        await #expect(throws: RedisError.self, "the client itself still gives up a cancelled task's command") {
            try await Task {
                withUnsafeCurrentTask { $0?.cancel() }
                _ = try await client.send(["PING"])
            }.value
        }
        client.close()
    }

    @Test func aSaveAConnectedReplicaDidNotAcknowledgeIsNotReportedAsSaved() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let store = RedisTokenStorage(client: client, replicaAcknowledgement: .milliseconds(500))
        let alone = try await store.save(StoredTokens(selectedProvider: "a", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        #expect(alone > .absent, "no replica connected: nothing to wait for")

        let replica = try await RedisServer(settings: ["--replicaof", "127.0.0.1", String(server.port)])
        var connected = false
        for _ in 0..<100 where !connected {
            let info = try await client.send(["INFO", "replication"]).text ?? ""
            connected = info.contains("connected_slaves:1") && info.contains("state=online")
            if !connected { try await Task.sleep(for: .milliseconds(100)) }
        }
        try #require(connected, "the replica is online")
        // A replica just online may still be loading what it was sent: save until one is acknowledged
        // (an unacknowledged save did reach the master, so each attempt names the version it holds).
        var synced = StorageVersion.absent
        for _ in 0..<30 where synced == .absent {
            let current = try await store.load(deviceID: "d", requestorID: "r").version
            let saved = await Result { () async throws(TokenStorageError) -> StorageVersion in
                try await store.save(StoredTokens(selectedProvider: "b", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: current)
            }
            if case .success(let version) = saved { synced = version } else { try await Task.sleep(for: .milliseconds(200)) }
        }
        try #require(synced > alone, "a save the replica acknowledged")
        replica.suspend(true)
        await #expect(throws: TokenStorageError.self) {
            try await store.save(StoredTokens(selectedProvider: "c", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: synced)
        }
        replica.suspend(false)
        let held = try await store.load(deviceID: "d", requestorID: "r")
        #expect(held.tokens.selectedProvider == "c" && held.version > synced, "the master holds it; only its safety was not confirmed")
        client.close()
        await replica.stop()
        await server.stop()
    }

    /// Every save is published: another node observing hears of it (for ids it has used, not others),
    /// and stops hearing once its observation is cancelled.
    @Test func aNodeHearsOfAnotherNodesSaves() async throws {
        let server = try await RedisServer()
        let nodeA = RedisTokenStorage(client: RedisClient(server.configuration(connections: 1)))
        let nodeB = RedisTokenStorage(client: RedisClient(server.configuration(connections: 1)))
        let heard = Heard()
        let observation = nodeB.observeSaves { device, requestor in heard.add(device + "/" + requestor) }
        _ = try await nodeB.version(deviceID: "d", requestorID: "r")  // node B uses these ids
        #expect(await Self.subscribed(to: nodeB.savesChannel, via: nodeA.client), "node B subscribed")
        let v1 = try await nodeA.save(StoredTokens(selectedProvider: "a", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        _ = try await nodeA.save(StoredTokens(deviceID: "x"), deviceID: "x", requestorID: "r", replacing: .absent)  // ids B never used
        #expect(await eventually { heard.all == ["d/r"] }, "heard: \(heard.all)")
        _ = try await nodeA.save(StoredTokens(selectedProvider: "b", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: v1)
        #expect(await eventually { heard.all == ["d/r", "d/r"] }, "heard: \(heard.all)")
        observation.cancel()
        try await Task.sleep(for: .milliseconds(400))  // the subscriber stops within one read slice
        _ = try await nodeA.save(.empty, deviceID: "d", requestorID: "r", replacing: try await nodeA.version(deviceID: "d", requestorID: "r"))
        try await Task.sleep(for: .milliseconds(300))
        expectEqual(heard.all.count, 2, "nothing after the observation ended")
        nodeA.client.close()
        nodeB.client.close()
        await server.stop()
    }

    /// Messages as an observer heard them.
    final class Heard: Sendable {
        private let log = Mutex<[String]>([])
        func add(_ entry: String) { log.withLock { $0.append(entry) } }
        var all: [String] { log.withLock { $0 } }
    }

    /// Whether `subscribers` connections are subscribed to `channel` within a few seconds (the subscriber connects on a
    /// thread of its own; a loaded machine may take a while).
    static func subscribed(to channel: String, via client: any RedisCommandSender, atLeast subscribers: Int = 1) async -> Bool {
        for _ in 0..<500 {
            if case .array(let parts?)? = try? await client.send(["PUBSUB", "NUMSUB", channel], key: nil), parts.count == 2,
                case .integer(let count) = parts[1], count >= subscribers
            {
                return true
            }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return false
    }


    @Test func ofManyNodesSavingOverOneVersionExactlyOneWins() async throws {
        let server = try await RedisServer()
        let nodes = (0..<8).map { _ in RedisTokenStorage(client: RedisClient(server.configuration(connections: 1))) }
        let base = try await nodes[0].save(StoredTokens(deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for (index, node) in nodes.enumerated() {
                group.addTask {
                    (try? await node.save(StoredTokens(selectedProvider: "m\(index)", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: base))
                        != nil
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        expectEqual(outcomes.filter { $0 }.count, 1)
        let stored = try await nodes[3].load(deviceID: "d", requestorID: "r")
        #expect(stored.version > base && stored.tokens.selectedProvider?.hasPrefix("m") == true)
        for node in nodes { node.client.close() }
        await server.stop()
    }

    /// Every save writes the schema of its JSON beside it (`s`); tokens without one (written by 0.4.0)
    /// read as schema 1, and tokens in a newer schema are refused with a typed error, never guessed at.
    @Test func theStoredJSONCarriesItsSchema() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        defer {
            client.close()
            Task { await server.stop() }
        }
        let store = RedisTokenStorage(client: client)
        let version = try await store.save(StoredTokens(selectedProvider: "acme-cable", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        let key = store.tokensKey(deviceID: "d", requestorID: "r")
        try await expectEqual(client.send(["HGET", key, "s"]).text, String(RedisTokenStorage.schema))
        _ = try await client.send(["HDEL", key, "s"])  // as 0.4.0 wrote it
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), VersionedTokens(StoredTokens(selectedProvider: "acme-cable", deviceID: "d"), version: version))
        _ = try await client.send(["HSET", key, "s", String(RedisTokenStorage.schema + 1)])
        do {
            _ = try await store.load(deviceID: "d", requestorID: "r")
            Issue.record("tokens in a newer schema were read")
        } catch {
            #expect("\(error)".contains("schema \(RedisTokenStorage.schema + 1)"), "\(error)")
        }
        await #expect(throws: TokenStorageError.self) { try await store.authentications(deviceID: "d") }
    }

    @Test func keysExpireWithTheirTokensAndTheDeviceListsEveryRequestor() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let now = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let store = RedisTokenStorage(client: client, rememberFor: .seconds(3600), now: { now })
        let token = AuthenticationToken(mvpdID: "m", requestorID: "r1", userID: "u", expires: now.adding(.seconds(600)))
        _ = try await store.save(StoredTokens(authentication: token, deviceID: "d"), deviceID: "d", requestorID: "r1", replacing: .absent)
        _ = try await store.save(StoredTokens(selectedProvider: "m", deviceID: "d"), deviceID: "d", requestorID: "r2", replacing: .absent)
        guard case .integer(let authenticated) = try await client.send(["PTTL", store.tokensKey(deviceID: "d", requestorID: "r1")]),
            case .integer(let remembered) = try await client.send(["PTTL", store.tokensKey(deviceID: "d", requestorID: "r2")])
        else { Issue.record("no TTL"); return }
        #expect((540_000...600_000).contains(authenticated), "the authentication's expiry: \(authenticated) ms")
        #expect((3_540_000...3_600_000).contains(remembered), "a remembered provider: rememberFor, \(remembered) ms")
        try await expectEqual(store.authentications(deviceID: "d"), [token])
        try await expectEqual(store.authentications(deviceID: "other"), [])
        // No id in a key name.
        guard case .array(let keys?) = try await client.send(["KEYS", "*"]) else { Issue.record("no keys"); return }
        let names = keys.compactMap(\.text)
        expectEqual(names.count, 4)
        #expect(
            names.allSatisfy { $0.wholeMatch(of: /entitle:\{[0-9a-f]{32}\}:(tokens:[0-9a-f]{32}|device|versions)/) != nil }, "\(names)")
        expectEqual(Set(names.map(RedisKeySlot.of)).count, 1, "one device's keys: one cluster slot")
        client.close()
        await server.stop()
    }

    @Test func whenRedisIsGoneEveryOperationIsATypedStorageErrorAndItRecovers() async throws {
        let server = try await RedisServer()
        // A stopped server refuses at once; the command timeout is only for a loaded machine's room (2 s once
        // failed the first save under the whole suite).
        let client = RedisClient(server.configuration(connectTimeout: .milliseconds(300), commandTimeout: .seconds(60)))
        let store = RedisTokenStorage(client: client)
        let v1 = try await store.save(StoredTokens(deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        await server.stop()
        await #expect(throws: TokenStorageError.self) { try await store.load(deviceID: "d", requestorID: "r") }
        await #expect(throws: TokenStorageError.self) { try await store.version(deviceID: "d", requestorID: "r") }
        do {
            _ = try await store.save(StoredTokens(deviceID: "d"), deviceID: "d", requestorID: "r", replacing: v1)
            Issue.record("a save to a stopped Redis succeeded")
        } catch {
            #expect("\(error)".contains("Redis"), "\(error)")
            #expect(error != .conflict(current: v1))
        }
        let again = try await RedisServer.restart(on: server.port)
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), .absent, "a new server without persistence")
        client.close()
        await RedisServer.kill(again)
    }

    @Test func aLoginOnOneNodeIsSeenOnAnotherAndFinishedThere() async throws {
        let server = try await RedisServer()
        let clock = ManualClock()
        let nodeA = RedisTokenStorage(client: RedisClient(server.configuration()), now: { clock.now() })
        let nodeB = RedisTokenStorage(client: RedisClient(server.configuration()), now: { clock.now() })
        let simulator = Simulator(world: .default, clock: clock, seed: 7)
        let a = SimulatedSession(storage: nodeA, clock: clock, simulator: simulator)
        let b = SimulatedSession(storage: nodeB, clock: clock, simulator: simulator)
        await a.enabler.setRequestor("sim-requestor")
        await b.enabler.setRequestor("sim-requestor")
        await a.settle()
        await b.settle()
        // Node A starts the login; the web view's redirect reaches node B, which finishes it.
        await a.enabler.setSelectedProvider("acme-cable")
        await a.settle()
        let login = try #require(a.lastNavigation)
        let visit = await a.userAgent.logIn(at: login, username: "alice", password: "wonderland")
        let back = try #require(visit.appURL)
        await b.enabler.handleExternalURL(back)
        await b.settle()
        #expect(b.ledger.take().contains(.setAuthenticationStatus(status: 1, errorCode: "")))
        await a.enabler.checkAuthentication()
        await a.settle()
        expectEqual(a.ledger.take().last, .setAuthenticationStatus(status: 1, errorCode: ""), "node A sees the login B finished")
        nodeA.client.close()
        nodeB.client.close()
        await server.stop()
    }
}

extension Result where Failure == TokenStorageError {
    /// The outcome of a store's operation.
    init(_ body: () async throws(TokenStorageError) -> Success) async {
        do throws(TokenStorageError) {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
