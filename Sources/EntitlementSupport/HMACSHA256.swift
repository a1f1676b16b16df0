/// HMAC-SHA-256 (RFC 2104), written here because the package has no dependencies. Tested against
/// the RFC 4231 vectors.
package enum HMACSHA256 {
    private static let blockSize = 64

    /// A key made ready: the hash states after the inner and outer pads, so each code costs only the
    /// message's blocks and two more (a verifier keeps one for its key).
    package struct PreparedKey: Sendable {
        let inner: SHA256
        let outer: SHA256

        package init<Key: Collection>(_ key: Key) where Key.Element == UInt8 {
            var block = key.count > blockSize ? SHA256.hash(key) : Array(key)
            block += [UInt8](repeating: 0, count: blockSize - block.count)
            var inner = SHA256()
            inner.update(block.map { $0 ^ 0x36 })
            var outer = SHA256()
            outer.update(block.map { $0 ^ 0x5C })
            self.inner = inner
            self.outer = outer
        }

        /// The 32-byte HMAC of `message`.
        package func code<Message: Sequence>(for message: Message) -> [UInt8] where Message.Element == UInt8 {
            withCode(for: message) { Array($0) }
        }

        /// Whether `code` is the HMAC of `message`; compares in constant time.
        package func isValid<Message: Sequence>(_ code: [UInt8], for message: Message) -> Bool where Message.Element == UInt8 {
            withCode(for: message) { HMACSHA256.equalInConstantTime(code, $0) }
        }

        /// Lends the HMAC of `message` to `body`, on the stack (the states copied are values: nothing
        /// is allocated).
        private func withCode<Message: Sequence, Result>(for message: Message, _ body: (UnsafeRawBufferPointer) -> Result) -> Result
        where Message.Element == UInt8 {
            var inner = self.inner
            inner.update(message)
            var outer = self.outer
            inner.finalize { outer.update($0) }
            return outer.finalize { body($0) }
        }
    }

    /// The 32-byte HMAC of `message` under `key`.
    package static func authenticationCode<Key: Collection, Message: Sequence>(for message: Message, key: Key) -> [UInt8]
    where Key.Element == UInt8, Message.Element == UInt8 {
        PreparedKey(key).code(for: message)
    }

    /// Whether `code` is the HMAC of `message` under `key`; compares in constant time.
    package static func isValid<Key: Collection, Message: Sequence>(_ code: [UInt8], for message: Message, key: Key) -> Bool
    where Key.Element == UInt8, Message.Element == UInt8 {
        equalInConstantTime(code, authenticationCode(for: message, key: key))
    }

    /// Whether `code` equals `expected`; the time depends only on the lengths.
    package static func equalInConstantTime(_ code: [UInt8], _ expected: [UInt8]) -> Bool {
        expected.withUnsafeBytes { equalInConstantTime(code, $0) }
    }

    /// Whether `code` equals the bytes of `expected`; the time depends only on the lengths.
    static func equalInConstantTime(_ code: [UInt8], _ expected: UnsafeRawBufferPointer) -> Bool {
        guard code.count == expected.count else { return false }
        var difference: UInt8 = 0
        for index in expected.indices { difference |= expected[index] ^ code[index] }
        return difference == 0
    }
}
