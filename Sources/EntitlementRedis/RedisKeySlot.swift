/// Redis Cluster's hash slots: a key's slot is CRC16 (XMODEM) of the key — or of its hash tag, the
/// part between the first `{` and the next `}` when that part is not empty — modulo 16384. Keys
/// with the same hash tag live in the same slot, so one script may touch them all.
package enum RedisKeySlot {
    /// How many slots a cluster has.
    package static let count = 16384

    /// The slot of `key`.
    package static func of(_ key: String) -> Int {
        let bytes = Array(key.utf8)
        return Int(crc16(hashed(bytes)) % UInt16(count))
    }

    /// A short hash tag whose slot is `slot` (base-36 numerals, the first that lands there): a name
    /// holding `{TAG}` lives in that slot — how a sharded channel is put beside a device's keys.
    package static func tag(for slot: Int) -> String { tags[((slot % count) + count) % count] }

    /// ``tag(for:)``'s table, found once: about 170,000 numerals are tried before every slot has one.
    private static let tags: [String] = {
        var tags = [String](repeating: "", count: count)
        var left = count
        var number = 0
        while left > 0 {
            let tag = String(number, radix: 36)
            let slot = Int(crc16(Array(tag.utf8)[...]) % UInt16(count))
            if tags[slot].isEmpty {
                tags[slot] = tag
                left -= 1
            }
            number += 1
        }
        return tags
    }()

    /// The bytes the slot is computed from: the hash tag when there is one.
    static func hashed(_ key: [UInt8]) -> ArraySlice<UInt8> {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")),
            let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")), close > open + 1
        else { return key[...] }
        return key[(open + 1)..<close]
    }

    /// CRC16-CCITT (XMODEM): polynomial 0x1021, initial value 0, no reflection (Redis Cluster's).
    static func crc16(_ bytes: ArraySlice<UInt8>) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }
}
