import EntitlementSupport

/// Seals what a token store writes and opens what it reads: encryption at rest for the personal data
/// tokens hold (user ids, household ids, zip codes, device ids, the MVPD's metadata). Give one to
/// `FileTokenStorage` or `RedisTokenStorage` (`sealing:`); every node that shares a store needs the same
/// key.
///
/// The package holds no cipher of its own (its one requirement is no dependencies); an adapter to
/// swift-crypto's AES-GCM is ten lines:
///
/// ```swift
/// import Crypto
///
/// struct AESGCMSealing: TokenSealing {
///     let key: SymmetricKey                          // 256 bits, from your secret manager
///     func seal(_ plaintext: [UInt8]) throws(TokenSealingError) -> [UInt8] {
///         do { return Array(try AES.GCM.seal(plaintext, using: key).combined!) }
///         catch { throw TokenSealingError("AES-GCM could not seal") }
///     }
///     func open(_ sealed: [UInt8]) throws(TokenSealingError) -> [UInt8] {
///         do { return Array(try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key)) }
///         catch { throw TokenSealingError("not sealed with this key, or altered") }
///     }
/// }
/// ```
///
/// Turning sealing on needs no migration: a store reads what it wrote before unsealed, and seals it at
/// its next save. A store without sealing refuses sealed tokens (``TokenStorageError/Code/unsealable``)
/// rather than overwrite them.
public protocol TokenSealing: Sendable {
    /// `plaintext` sealed (for an AEAD: its nonce, ciphertext and tag).
    func seal(_ plaintext: [UInt8]) throws(TokenSealingError) -> [UInt8]
    /// `sealed` opened; throws when it was not sealed with this key or was altered.
    func open(_ sealed: [UInt8]) throws(TokenSealingError) -> [UInt8]
}

/// Why sealing or opening failed (in words, with no secret in them).
public struct TokenSealingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What went wrong.
    public let description: String

    /// An error saying `description`.
    public init(_ description: String) { self.description = description }
}

/// The bytes a store writes for a value's plain bytes: with a sealing, `sealed:1:` and the sealed
/// bytes in base64; without one, the plain bytes.
package enum SealedValue {
    /// What sealed values start with (plain values are JSON: they start with `{`).
    package static let marker = Array("sealed:1:".utf8)

    /// The stored form of `plain`.
    package static func stored(_ plain: [UInt8], sealing: (any TokenSealing)?) throws(TokenStorageError) -> [UInt8] {
        guard let sealing else { return plain }
        do {
            return marker + Array(Base64.encode(try sealing.seal(plain)).utf8)
        } catch {
            throw .unsealable("sealing failed: \(error)")
        }
    }

    /// The plain bytes of a stored value: a sealed one opened with `sealing`, a plain one as it is
    /// (written before sealing was turned on; the next save seals it).
    package static func plain(_ stored: [UInt8], sealing: (any TokenSealing)?) throws(TokenStorageError) -> [UInt8] {
        guard stored.starts(with: marker) else { return stored }
        guard let sealing else { throw .unsealable("this store has no sealing; give it the fleet's") }
        guard let sealed = Base64.decode(String(decoding: stored.dropFirst(marker.count), as: UTF8.self)) else {
            throw .unsealable("the sealed value is not base64")
        }
        do {
            return try sealing.open(sealed)
        } catch {
            throw .unsealable("\(error)")
        }
    }

    /// Whether `stored` is sealed.
    package static func isSealed(_ stored: [UInt8]) -> Bool { stored.starts(with: marker) }
}
