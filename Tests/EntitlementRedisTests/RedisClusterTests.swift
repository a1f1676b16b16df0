import EntitlementEngine
import Foundation
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
            let client = RedisClusterClient(cluster.configuration())
            defer { client.close() }
            let store = RedisTokenStorage(client: client, keyPrefix: "fleet")
            var versions: [String: StorageVersion] = [:]
            for number in 0..<300 {
                let device = "device-\(number)"
                versions[device] = try await store.save(Self.tokens("acme-cable", device), deviceID: device, requestorID: "sim-requestor", replacing: .absent)
                _ = try await store.save(Self.tokens("other", device), deviceID: device, requestorID: "other-requestor", replacing: .absent)
            }
            #expect(Set(client.slotOwners).count == 3, "three masters serve the slots")
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
                    #expect(try await node.send(["EXISTS", store.deviceKey(deviceID: "device-7")]) == .integer(1))
                }
            }
            #expect(holders == 1)
        }
    }

    @Test func aSlotMovedToAnotherMasterIsFollowed() async throws {
        try await RedisClusterServers.with { cluster in
            let client = RedisClusterClient(cluster.configuration())
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
            #expect(try await store.load(deviceID: device, requestorID: "sim-requestor").version == second)
            #expect(try await store.load(deviceID: moving, requestorID: "sim-requestor").version == asked)
            #expect(RedisClusterClient.split(client.slotOwners[slot])?.1 == target.port)
        }
    }

    @Test func whenAMasterDiesItsReplicaTakesOverAndSavesGoOn() async throws {
        try await RedisClusterServers.with { cluster in
            let client = RedisClusterClient(cluster.configuration(commandTimeout: .seconds(15)))
            defer { client.close() }
            let store = RedisTokenStorage(client: client, keyPrefix: "fleet")
            let device = "device-failover"
            var version = try await store.save(Self.tokens("before", device), deviceID: device, requestorID: "sim-requestor", replacing: .absent)
            let slot = RedisKeySlot.of(store.tokensKey(deviceID: device, requestorID: "sim-requestor"))
            let ownerPort = try #require(RedisClusterClient.split(client.slotOwners[slot])?.1)
            // The save returned once a replica acknowledged it (WAIT 1 after each save on a cluster), so the
            // replica holds it and the master may die at once.
            #expect(store.replicaAcknowledgement == .milliseconds(500))
            #expect(await cluster.replicaHolds(store.tokensKey(deviceID: device, requestorID: "sim-requestor"), masterPort: ownerPort))
            await cluster.kill(port: ownerPort)
            let started = ContinuousClock.now
            version = try await store.save(Self.tokens("after", device), deviceID: device, requestorID: "sim-requestor", replacing: version)
            let loaded = try await store.load(deviceID: device, requestorID: "sim-requestor")
            #expect(loaded.version == version && loaded.tokens.selectedProvider == "after")
            #expect(RedisClusterClient.split(client.slotOwners[slot])?.1 != ownerPort, "the promoted replica serves the slot")
            #expect(ContinuousClock.now - started < .seconds(15))
        }
    }

    /// Save notifications on a cluster go by sharded pub/sub: each slot's channel on its master, heard
    /// by a node from every master, and again after a slot moved and after a master died.
    @Test func aNodeHearsSavesFromEveryMasterAfterASlotMovedAndAfterAFailover() async throws {
        try await RedisClusterServers.with { cluster in
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
            #expect(Set(clientA.slotOwners.filter { !$0.isEmpty }).count == 3, "the devices are spread over the three masters")

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

    /// One call, either kind of server: `RedisConnector` asks the server which client it calls for.
    @Test func aStandaloneServerGetsAClientAndAClusterNodeAClusterClient() async throws {
        let server = try await RedisServer()
        defer { Task { await server.stop() } }
        let single = try await RedisConnector.connect(server.configuration())
        defer { single.close() }
        #expect(single is RedisClient)
        #expect(try await single.send(["PING"], key: nil) == .simpleString("PONG"))
        try await RedisClusterServers.with { cluster in
            let client = try await RedisConnector.connect(cluster.configuration())
            defer { client.close() }
            #expect(client is RedisClusterClient)
            let store = RedisTokenStorage(client: client)
            let version = try await store.save(StoredTokens(selectedProvider: "p", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
            #expect(try await store.load(deviceID: "d", requestorID: "r").version == version)
        }
    }
}
