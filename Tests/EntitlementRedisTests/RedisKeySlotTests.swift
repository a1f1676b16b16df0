import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

@Suite("Redis Cluster hash slots")
struct RedisKeySlotTests {
    @Test func crc16MatchesTheClusterSpecificationsVector() {
        // The Redis Cluster specification: CRC16 of "123456789" is 0x31C3.
        expectEqual(RedisKeySlot.crc16(Array("123456789".utf8)[...]), 0x31C3)
    }

    @Test(arguments: [
        ("foo", 12182), ("bar", 5061), ("{user1000}.following", 3443), ("{user1000}.followers", 3443),
        ("foo{}{bar}", 8363), ("foo{{bar}}zap", 4015), ("foo{bar}{zap}", 5061), ("", 0),
    ])
    func slotsAreRedisOwn(key: String, slot: Int) {
        // Figures from `CLUSTER KEYSLOT` on redis-server 7.0.
        expectEqual(RedisKeySlot.of(key), slot)
    }

    @Test func everySlotHasATagThatPutsANameThere() {
        for slot in 0..<RedisKeySlot.count {
            let tag = RedisKeySlot.tag(for: slot)
            guard RedisKeySlot.of("entitle:saves:{" + tag + "}") == slot, tag.count <= 4 else {
                Issue.record("slot \(slot): tag '\(tag)' lands in \(RedisKeySlot.of("{" + tag + "}"))")
                return
            }
        }
    }

    /// `CLUSTER SLOTS` as Redis 7 answers it: each range's master, then its healthy replicas (failed
    /// nodes are left out); a master announced without a host is the node asked.
    @Test func theSlotMapNamesEachSlotsMasterAndCountsItsReplicas() throws {
        func node(_ host: String, _ port: Int64) -> RESPValue { .array([.bulk(host), .integer(port), .bulk("id-\(port)")]) }
        let answer = RESPValue.array([
            .array([.integer(0), .integer(5460), node("127.0.0.1", 7000), node("127.0.0.1", 7003)]),
            .array([.integer(5461), .integer(10922), node("", 7001)]),
            .array([.integer(10923), .integer(16383), node("10.0.0.2", 7002), node("10.0.0.5", 7005), node("10.0.0.6", 7006)]),
        ])
        let map = try RedisClusterClient.map(from: answer, askedAt: "127.0.0.1:7001")
        #expect(map.owners[0] == "127.0.0.1:7000" && map.owners[5460] == "127.0.0.1:7000")
        #expect(map.owners[5461] == "127.0.0.1:7001" && map.owners[16383] == "10.0.0.2:7002")
        expectEqual(map.replicas, ["127.0.0.1:7000": 1, "127.0.0.1:7001": 0, "10.0.0.2:7002": 2])
        #expect(throws: RedisError.self) { try RedisClusterClient.map(from: .array([.array([.integer(0)])]), askedAt: "x:1") }
        #expect(throws: RedisError.self) {
            try RedisClusterClient.map(from: .array([.array([.integer(9), .integer(3), node("h", 1)])]), askedAt: "x:1")
        }
    }
}
