/// HMAC-SHA-256 (RFC 2104), written here because the package has no dependencies. Tested against
/// the RFC 4231 vectors.
public enum HMACSHA256 {
    private static let blockSize = 64

    /// The 32-byte HMAC of `message` under `key`.
    public static func authenticationCode<Key: Collection, Message: Sequence>(for message: Message, key: Key) -> [UInt8]
    where Key.Element == UInt8, Message.Element == UInt8 {
        var block = key.count > blockSize ? SHA256.hash(key) : Array(key)
        block += [UInt8](repeating: 0, count: blockSize - block.count)
        var inner = SHA256()
        inner.update(block.map { $0 ^ 0x36 })
        inner.update(message)
        var outer = SHA256()
        outer.update(block.map { $0 ^ 0x5C })
        outer.update(inner.finalize())
        return outer.finalize()
    }

    /// Whether `code` is the HMAC of `message` under `key`; compares in constant time.
    public static func isValid<Key: Collection, Message: Sequence>(_ code: [UInt8], for message: Message, key: Key) -> Bool
    where Key.Element == UInt8, Message.Element == UInt8 {
        let expected = authenticationCode(for: message, key: key)
        guard code.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ code[index] }
        return difference == 0
    }
}
