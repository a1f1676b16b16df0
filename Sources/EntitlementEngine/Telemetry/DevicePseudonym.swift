import EntitlementSupport
import Synchronization

/// How logs and metrics name a device: a pseudonym, a keyed hash of its id (`dev-` and 12 hex
/// digits), never the id itself — device ids are personal data. The same id has the same pseudonym
/// wherever the key is the same, so set one key (``useKey(_:)``, from your secret manager) on every
/// node of a fleet and a device's lines line up across nodes; someone who reads the logs without the
/// key cannot tell which device a pseudonym stands for.
///
/// Until a key is set the package's own key is used: it is public, so such pseudonyms only keep ids
/// out of sight — set your own in production.
///
/// The key is the process's, as a logging system's set-up is: every line a process writes — its
/// engines', hosts', transports' — must name a device the same way, so it is set once, not passed to
/// each. It belongs to the telemetry; the pure machine never names a device in a log.
public enum DevicePseudonym {
    /// The key in use, prepared; the lock is held only to swap or read the reference.
    private static let key = Mutex(PreparedKey(Array("entitle.device-pseudonym.default".utf8)))

    private final class PreparedKey: Sendable {
        let prepared: HMACSHA256.PreparedKey
        init(_ key: [UInt8]) { prepared = HMACSHA256.PreparedKey(key) }
    }

    /// Uses `key` (any bytes; 32 random ones are plenty) for every pseudonym from now on.
    public static func useKey(_ key: [UInt8]) {
        let prepared = PreparedKey(key)
        self.key.withLock { $0 = prepared }
    }

    /// The pseudonym of `deviceID`: `dev-` and the first 12 hex digits of its keyed hash.
    public static func of(_ deviceID: String) -> String {
        pseudonym(key.withLock { $0 }.prepared.code(for: Array(deviceID.utf8)))
    }

    /// The pseudonym `deviceID` has under `key` (a support tool finding a device's lines, say).
    public static func of(_ deviceID: String, key: [UInt8]) -> String {
        pseudonym(HMACSHA256.authenticationCode(for: Array(deviceID.utf8), key: key))
    }

    private static func pseudonym(_ code: [UInt8]) -> String { "dev-" + Hex.encode(Array(code.prefix(6))) }
}
