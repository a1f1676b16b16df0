import EntitlementEngine
import EntitlementSupport
import Synchronization

/// A `TokenSealing` for tests and the simulator's fleet: HMAC-SHA-256 as a keystream (counter mode)
/// with an HMAC tag over the nonce and ciphertext. It keeps planted values out of what a store writes
/// and refuses another key or an altered value, which is what the tests check — but it is no reviewed
/// cipher: in production use an AEAD (the `TokenSealing` documentation shows AES-GCM from
/// swift-crypto).
package final class TestOnlySealing: TokenSealing {
    private let encryption: HMACSHA256.PreparedKey
    private let authentication: HMACSHA256.PreparedKey
    private let nonces: Mutex<SplitMix64>

    /// A sealing with a key derived from `key` (any bytes), its nonces drawn from `seed` (by default a
    /// random one: two processes sealing with one key must not draw the same nonces).
    package init(key: String, seed: UInt64 = .random(in: .min ... .max)) {
        encryption = HMACSHA256.PreparedKey(Array(("encrypt:" + key).utf8))
        authentication = HMACSHA256.PreparedKey(Array(("authenticate:" + key).utf8))
        nonces = Mutex(SplitMix64(seed: seed))
    }

    /// A 16-byte nonce, the ciphertext, and a 32-byte tag.
    package func seal(_ plaintext: [UInt8]) throws(TokenSealingError) -> [UInt8] {
        let nonce = nonces.withLock { generator in (0..<2).flatMap { _ in withUnsafeBytes(of: generator.next().littleEndian, Array.init) } }
        let body = nonce + crypt(plaintext, nonce: nonce)
        return body + authentication.code(for: body)
    }

    /// The plaintext; throws for another key or an altered value.
    package func open(_ sealed: [UInt8]) throws(TokenSealingError) -> [UInt8] {
        guard sealed.count >= 48 else { throw TokenSealingError("the sealed value is too short") }
        let body = Array(sealed.dropLast(32))
        guard authentication.isValid(Array(sealed.suffix(32)), for: body) else {
            throw TokenSealingError("not sealed with this key, or altered")
        }
        return crypt(Array(body.dropFirst(16)), nonce: Array(body.prefix(16)))
    }

    private func crypt(_ input: [UInt8], nonce: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(input.count)
        var counter: UInt32 = 0
        var block: [UInt8] = []
        for (index, byte) in input.enumerated() {
            if index % 32 == 0 {
                block = encryption.code(for: nonce + withUnsafeBytes(of: counter.bigEndian, Array.init))
                counter &+= 1
            }
            output.append(byte ^ block[index % 32])
        }
        return output
    }
}
