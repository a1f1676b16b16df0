import Testing

@testable import EntitlementRedis

@Suite("Redis Cluster hash slots")
struct RedisKeySlotTests {
    @Test func crc16MatchesTheClusterSpecificationsVector() {
        // The Redis Cluster specification: CRC16 of "123456789" is 0x31C3.
        #expect(RedisKeySlot.crc16(Array("123456789".utf8)[...]) == 0x31C3)
    }

    @Test(arguments: [
        ("foo", 12182), ("bar", 5061), ("{user1000}.following", 3443), ("{user1000}.followers", 3443),
        ("foo{}{bar}", 8363), ("foo{{bar}}zap", 4015), ("foo{bar}{zap}", 5061), ("", 0),
    ])
    func slotsAreRedisOwn(key: String, slot: Int) {
        // Figures from `CLUSTER KEYSLOT` on redis-server 7.0.
        #expect(RedisKeySlot.of(key) == slot)
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
}
