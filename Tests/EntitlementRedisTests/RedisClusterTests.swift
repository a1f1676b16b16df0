import EntitlementEngine
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

@Suite(
    "The token store on a real Redis Cluster", .serialized,
    .enabled(if: RedisClusterServers.toolsInstalled || RedisServer.required, "needs redis-server and redis-cli (.ci/run installs them)"))
struct RedisClusterTests {
    private static func tokens(_ provider: String, _ device: String) -> StoredTokens {
        StoredTokens(selectedProvider: provider, deviceID: device)
    }

    @Test func savesAndLoadsGoToEachDevicesMasterAcrossTheCluster() async throws {
        try await RedisClusterServers.with { cluster in
            // A bound far from the behaviour: a loaded machine must not fail a save the cluster makes.
            let client = RedisClusterClient(cluster.configuration(commandTimeout: .seconds(30)))
            defer { client.close() }
            let store = RedisTokenStorage(client: client, keyPrefix: "fleet")
            var versions: [String: StorageVersion] = [:]
            for number in 0..<300 {
                let device = "device-\(number)"
                versions[device] = try await store.save(Self.tokens("acme-cable", device), deviceID: device, requestorID: "sim-requestor", replacing: .absent)
                _ = try await store.save(Self.tokens("other", device), deviceID: device, requestorID: "other-requestor", replacing: .absent)
            }
            expectEqual(Set(client.slotOwners).count, 3, "three masters serve the slots")
            for number in 0..<300 {
                let device = "device-\(number)"
                let loaded = try await store.load(deviceID: device, requestorID: "sim-requestor")
                #expect(loaded.version == versions[device] && loaded.tokens.selectedProvider == "acme-cable")
            }
            // Compare-and-set holds on the cluster too.
            await #expect(throws: TokenStorageError.self) {
                try await store.save(Self.tokens("late", "device-7"), deviceID: "device-7", requestorID: "sim-requestor", replacing: .absent)
            }
            // The keys of one device sit on one master, across requestors.
            let masters = try await cluster.masters()
            var holders = 0
            for master in masters {
                let node = cluster.node(master.port)
                defer { node.close() }
                // A master that does not own the slot answers MOVED.
                if (try? await node.send(["EXISTS", store.tokensKey(deviceID: "device-7", requestorID: "other-requestor")])) == .integer(1) {
                    holders += 1
                    try await expectEqual(node.send(["EXISTS", store.deviceKey(deviceID: "device-7")]), .integer(1))
                }
            }
            expectEqual(holders, 1)
        }
    }

    @Test func aSlotMovedToAnotherMasterIsFollowed() async throws {
        try await RedisClusterServers.with { cluster in
            let measurements = RedisMeasurements()
            let client = RedisClusterClient(cluster.configuration(commandTimeout: .seconds(30)), metrics: measurements)
            defer { client.close() }
            let store = RedisTokenStorage(client: client, keyPrefix: "fleet")
            let device = "device-moved"
            let first = try await store.save(Self.tokens("a", device), deviceID: device, requestorID: "sim-requestor", replacing: .absent)
            let slot = RedisKeySlot.of(store.tokensKey(deviceID: device, requestorID: "sim-requestor"))
            let masters = try await cluster.masters()
            let sourcePort = try #require(RedisClusterClient.split(client.slotOwners[slot])?.1)
            let source = try #require(masters.first { $0.port == sourcePort })
            let target = try #require(masters.first { $0.port != sourcePort })
            // Move the slot by hand, as a resharding does: importing, migrating, the keys, then the owner.
            try await cluster.beginMoving(slot: slot, from: source, to: target)
            // While it moves, a new device of the slot is sent to the target (ASK), which asks to try again
            // (TRYAGAIN: a script's keys are not all there yet) until the move is over: the save waits, then lands.
            let moving = try #require((0..<200_000).lazy.map { "device-ask-\($0)" }.first {
                RedisKeySlot.of(store.tokensKey(deviceID: $0, requestorID: "sim-requestor")) == slot
            })
            let asking = Task { try await store.save(Self.tokens("asked", moving), deviceID: moving, requestorID: "sim-requestor", replacing: .absent) }
            try await Task.sleep(for: .milliseconds(500))
            try await cluster.finishMoving(slot: slot, from: source, to: target)
            let asked = try await asking.value
            // The client's map still names the source: MOVED, followed, and the map read again.
            let second = try await store.save(Self.tokens("b", device), deviceID: device, requestorID: "sim-requestor", replacing: first)
            try await expectEqual(store.load(deviceID: device, requestorID: "sim-requestor").version, second)
            try await expectEqual(store.load(deviceID: moving, requestorID: "sim-requestor").version, asked)
            expectEqual(RedisClusterClient.split(client.slotOwners[slot])?.1, target.port)
            // The redirections were counted, and each save timed once however it was redirected.
            // (Which of them the saves met depends on when the map was read again.)
            let redirected = ["moved", "ask", "refused"].map { measurements.count("entitle.redis.retries reason=\($0)") }.reduce(0, +)
            #expect(redirected > 0, "\(measurements.keys)")
            #expect(measurements.keys.contains { $0.hasPrefix("entitle.redis.commands command=") && $0.hasSuffix("outcome=ok") })
        }
    }

    @Test func whenAMasterDiesItsReplicaTakesOverAndSavesGoOn() async throws {
        try await RedisClusterServers.with(nodeTimeout: .seconds(1)) { cluster in
            let client = RedisClusterClient(cluster.configuration(commandTimeout: .seconds(15)))
            defer { client.close() }
            let store = RedisTokenStorage(client: client, keyPrefix: "fleet")
            #expect(await cluster.untilReplicasAreKnown(to: client))
            let device = "device-failover"
            var version = try await store.save(Self.tokens("before", device), deviceID: device, requestorID: "sim-requestor", replacing: .absent)
            let slot = RedisKeySlot.of(store.tokensKey(deviceID: device, requestorID: "sim-requestor"))
            let ownerPort = try #require(RedisClusterClient.split(client.slotOwners[slot])?.1)
            // The save returned once a replica acknowledged it (WAIT 1 after each save on a cluster), so the
            // replica holds it and the master may die at once.
            expectEqual(store.replicaAcknowledgement, .milliseconds(500))
            #expect(await cluster.replicaHolds(store.tokensKey(deviceID: device, requestorID: "sim-requestor"), masterPort: ownerPort))
            await cluster.kill(port: ownerPort)
            let started = ContinuousClock.now
            version = try await store.save(Self.tokens("after", device), deviceID: device, requestorID: "sim-requestor", replacing: version)
            let loaded = try await store.load(deviceID: device, requestorID: "sim-requestor")
            #expect(loaded.version == version && loaded.tokens.selectedProvider == "after")
            let promoted = try #require(RedisClusterClient.split(client.slotOwners[slot])?.1)
            #expect(promoted != ownerPort, "the promoted replica serves the slot")
            #expect(ContinuousClock.now - started < .seconds(15))
            // The promoted master has no replica (its old master is dead): saves there do not WAIT for one.
            let node = cluster.node(promoted)
            defer { node.close() }
            let waitsBefore = try await Self.waitCalls(on: node)
            for _ in 0..<5 { version = try await store.save(Self.tokens("alone", device), deviceID: device, requestorID: "sim-requestor", replacing: version) }
            try await expectEqual(Self.waitCalls(on: node), waitsBefore)
            try await expectEqual(store.load(deviceID: device, requestorID: "sim-requestor").version, version)
        }
    }

    /// 50 writers appending to one device's history with compare-and-set, and 50 spread over 1,000
    /// devices, while the master serving the first device is SIGKILLed: its replica takes over, the
    /// writers go on, and every save that was acknowledged is in the final history (no lost update),
    /// which holds nothing that was never attempted.
    @Test(arguments: [1, 1000])
    func aMasterKilledUnderFiftyWritersLosesNoAcknowledgedSave(devices count: Int) async throws {
        try await RedisClusterServers.with(nodeTimeout: .seconds(1)) { cluster in
            let client = RedisClusterClient(cluster.configuration(commandTimeout: .seconds(20)))
            defer { client.close() }
            let store = RedisTokenStorage(client: client, keyPrefix: "fleet")
            #expect(await cluster.untilReplicasAreKnown(to: client))
            let devices = (0..<count).map { "device-writers-\($0)" }
            _ = try await store.version(deviceID: devices[0], requestorID: "r")  // reads the map
            let slot = RedisKeySlot.of(store.deviceKey(deviceID: devices[0]))
            let victim = try #require(RedisClusterClient.split(client.slotOwners[slot])?.1)
            let ledger = WriteLedger()
            let writers = (0..<50).map { writer in
                Task {
                    var random = SystemRandomNumberGenerator()
                    var sequence = 0
                    while !ledger.isStopped {
                        let device = devices.randomElement(using: &random)!
                        guard let current = try? await store.load(deviceID: device, requestorID: "r") else {
                            try? await Task.sleep(for: .milliseconds(50))
                            continue
                        }
                        sequence += 1
                        let entry = "w\(writer)-\(sequence)"
                        let history = (current.tokens.selectedProvider.map { [$0] } ?? []) + [entry]
                        ledger.attempted(device, entry)
                        do throws(TokenStorageError) {
                            _ = try await store.save(
                                Self.tokens(history.joined(separator: ","), device), deviceID: device, requestorID: "r", replacing: current.version)
                            ledger.acknowledged(device, entry)
                        } catch where error.code == .conflict {
                            continue
                        } catch {
                            try? await Task.sleep(for: .milliseconds(50))
                        }
                    }
                }
            }
            try await Task.sleep(for: .seconds(1))
            let beforeKill = ledger.acknowledgedCount
            await cluster.kill(port: victim)
            let killed = ContinuousClock.now
            // Until the replica serves the slot and writers have saved there again for a while.
            let promoted = await cluster.waitUntil({
                (try? await client.readMap()).map { RedisClusterClient.split($0[slot])?.1 != victim } ?? false
            }, seconds: 30)
            let atPromotion = ledger.acknowledgedCount
            let promotedAfter = ContinuousClock.now - killed
            _ = await cluster.waitUntil({ ledger.acknowledgedCount > atPromotion + 50 }, seconds: 20)
            ledger.stop()
            for writer in writers { await writer.value }
            #expect(promoted, "the replica took over")
            #expect(beforeKill > 0 && ledger.acknowledgedCount > atPromotion, "saves before the kill (\(beforeKill)) and after it")
            var lost: [String] = []
            var invented: [String] = []
            for device in devices {
                let stored = try await store.load(deviceID: device, requestorID: "r").tokens.selectedProvider ?? ""
                let history = stored.split(separator: ",").map(String.init)
                lost += ledger.acknowledged(on: device).subtracting(history)
                invented += Set(history).subtracting(ledger.attempted(on: device))
                expectEqual(Set(history).count, history.count, "no entry twice on \(device)")
            }
            print("50 writers on \(count) device(s): \(ledger.acknowledgedCount) saves acknowledged, \(beforeKill) before the kill, \(atPromotion) by the promotion (\(promotedAfter) after the kill), \(ContinuousClock.now - killed) in all")
            #expect(lost.isEmpty, "acknowledged saves lost: \(lost.prefix(10))")
            #expect(invented.isEmpty, "entries never attempted: \(invented.prefix(10))")
        }
    }

    /// What writers attempted and what the store acknowledged, per device.
    final class WriteLedger: Sendable {
        private let entries = Mutex<(attempted: [String: Set<String>], acknowledged: [String: Set<String>], count: Int)>(([:], [:], 0))
        func attempted(_ device: String, _ entry: String) { entries.withLock { _ = $0.attempted[device, default: []].insert(entry) } }
        func acknowledged(_ device: String, _ entry: String) {
            entries.withLock {
                $0.acknowledged[device, default: []].insert(entry)
                $0.count += 1
            }
        }
        func attempted(on device: String) -> Set<String> { entries.withLock { $0.attempted[device] ?? [] } }
        func acknowledged(on device: String) -> Set<String> { entries.withLock { $0.acknowledged[device] ?? [] } }
        var acknowledgedCount: Int { entries.withLock { $0.count } }
        private let stopped = Atomic<Bool>(false)
        /// Tells the writers to finish.
        func stop() { stopped.store(true, ordering: .relaxed) }
        var isStopped: Bool { stopped.load(ordering: .relaxed) }
    }

    /// Save notifications on a cluster go by sharded pub/sub: each slot's channel on its master, heard
    /// by a node from every master, and again after a slot moved and after a master died.
    @Test func aNodeHearsSavesFromEveryMasterAfterASlotMovedAndAfterAFailover() async throws {
        try await RedisClusterServers.with(nodeTimeout: .seconds(1)) { cluster in
            let clientA = RedisClusterClient(cluster.configuration(commandTimeout: .seconds(15)))
            let clientB = RedisClusterClient(cluster.configuration(commandTimeout: .seconds(15)))
            defer {
                clientA.close()
                clientB.close()
            }
            let nodeA = RedisTokenStorage(client: clientA, keyPrefix: "fleet")
            let nodeB = RedisTokenStorage(client: clientB, keyPrefix: "fleet")
            let heard = RedisTokenStorageTests.Heard()
            let observation = nodeB.observeSaves { device, _ in heard.add(device) }
            defer { observation.cancel() }
            let devices = (0..<30).map { "device-heard-\($0)" }
            for device in devices { _ = try await nodeB.version(deviceID: device, requestorID: "r") }  // node B uses these ids
            let masters = try await cluster.masters()
            // Every master holds its slots' channels (sharded: no channel is on every node).
            #expect(await cluster.waitUntil({ await Self.shardChannels(on: masters, of: cluster) == [5461, 5461, 5462] }, seconds: 20))
            var versions: [String: StorageVersion] = [:]
            for device in devices { versions[device] = try await nodeA.save(Self.tokens("a", device), deviceID: device, requestorID: "r", replacing: .absent) }
            #expect(await cluster.waitUntil({ Set(heard.all) == Set(devices) }, seconds: 10), "heard: \(Set(heard.all).count) of 30")
            expectEqual(Set(clientA.slotOwners.filter { !$0.isEmpty }).count, 3, "the devices are spread over the three masters")

            // A slot moves: its old master unsubscribes node B (sunsubscribe); node B subscribes at the new one.
            let device = devices[0]
            let slot = RedisKeySlot.of(nodeA.deviceKey(deviceID: device))
            let sourcePort = try #require(RedisClusterClient.split(clientA.slotOwners[slot])?.1)
            let source = try #require(masters.first { $0.port == sourcePort })
            let target = try #require(masters.first { $0.port != sourcePort })
            try await cluster.beginMoving(slot: slot, from: source, to: target)
            try await cluster.finishMoving(slot: slot, from: source, to: target)
            #expect(await Self.heardAgain(device, by: heard, savingWith: nodeA, from: &versions), "heard after the slot moved")

            // A master dies: its replica is promoted, node B subscribes there.
            let other = try #require(devices.first { RedisClusterClient.split(clientA.slotOwners[RedisKeySlot.of(nodeA.deviceKey(deviceID: $0))])?.1 != target.port })
            let dying = try #require(RedisClusterClient.split(clientA.slotOwners[RedisKeySlot.of(nodeA.deviceKey(deviceID: other))])?.1)
            await cluster.kill(port: dying)
            #expect(await Self.heardAgain(other, by: heard, savingWith: nodeA, from: &versions), "heard after the failover")
        }
    }

    /// How many of the store's sharded save channels each master holds, sorted.
    private static func shardChannels(on masters: [(id: String, port: UInt16)], of cluster: RedisClusterServers) async -> [Int] {
        var counts: [Int] = []
        for master in masters {
            let node = cluster.node(master.port)
            defer { node.close() }
            guard case .array(let channels?)? = try? await node.send(["PUBSUB", "SHARDCHANNELS", "fleet:saves:*"]) else { return [] }
            counts.append(channels.count)
        }
        return counts.sorted()
    }

    /// Saves `device` again every 300 ms until the observer hears it (a subscription moving misses what is
    /// published meanwhile: messages are hints), for up to 30 s.
    private static func heardAgain(
        _ device: String, by heard: RedisTokenStorageTests.Heard, savingWith store: RedisTokenStorage, from versions: inout [String: StorageVersion]
    ) async -> Bool {
        let before = heard.all.count
        for _ in 0..<100 {
            if let version = try? await store.save(Self.tokens("again", device), deviceID: device, requestorID: "r", replacing: versions[device] ?? .absent) {
                versions[device] = version
            }
            try? await Task.sleep(for: .milliseconds(300))
            if heard.all.dropFirst(before).contains(device) { return true }
        }
        return false
    }

    /// How many `WAIT` commands `node` has run.
    private static func waitCalls(on node: RedisClient) async throws -> Int {
        let stats = try await node.send(["INFO", "commandstats"]).text ?? ""
        guard let line = stats.split(separator: "\r\n").first(where: { $0.hasPrefix("cmdstat_wait:") }) else { return 0 }
        return Int(line.split(separator: "=")[1].split(separator: ",")[0]) ?? -1
    }

    /// One call, either kind of server: `RedisConnector` asks the server which client it calls for.
    @Test func aStandaloneServerGetsAClientAndAClusterNodeAClusterClient() async throws {
        let server = try await RedisServer()
        defer { Task { await server.stop() } }
        let single = try await RedisConnector.connect(server.configuration())
        defer { single.close() }
        #expect(single is RedisClient)
        try await expectEqual(single.send(["PING"], key: nil), .simpleString("PONG"))
        try await RedisClusterServers.with { cluster in
            let client = try await RedisConnector.connect(cluster.configuration())
            defer { client.close() }
            #expect(client is RedisClusterClient)
            let store = RedisTokenStorage(client: client)
            let version = try await store.save(StoredTokens(selectedProvider: "p", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
            try await expectEqual(store.load(deviceID: "d", requestorID: "r").version, version)
        }
    }
}
