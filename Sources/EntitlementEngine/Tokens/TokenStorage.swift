import Synchronization

/// Where a device's tokens live between calls and sessions: the token storage port.
///
/// Keys are (device id, requestor id). Implementations must be safe to call from any thread.
public protocol TokenStorage: Sendable {
    /// The tokens stored for `deviceID` and `requestorID` (``StoredTokens/empty`` when none).
    func load(deviceID: String, requestorID: String) throws -> StoredTokens
    /// Replaces the tokens stored for `deviceID` and `requestorID`.
    func save(_ tokens: StoredTokens, deviceID: String, requestorID: String) throws
    /// Every authentication stored for `deviceID`, by any requestor: what single sign-on across
    /// apps sharing this storage starts from. The default finds none (no single sign-on).
    func authentications(deviceID: String) throws -> [AuthenticationToken]
}

extension TokenStorage {
    /// No single sign-on: a storage that cannot list a device's tokens finds none.
    public func authentications(deviceID: String) throws -> [AuthenticationToken] { [] }
}

/// Token storage in memory: the default, and what tests use.
public final class InMemoryTokenStorage: TokenStorage {
    private let contents = Mutex<[String: StoredTokens]>([:])

    /// Creates an empty store.
    public init() {}

    /// The stored tokens, or ``StoredTokens/empty``.
    public func load(deviceID: String, requestorID: String) throws -> StoredTokens {
        contents.withLock { $0[Self.key(deviceID, requestorID)] ?? .empty }
    }

    /// Replaces the stored tokens (an empty set removes the entry).
    public func save(_ tokens: StoredTokens, deviceID: String, requestorID: String) throws {
        contents.withLock { $0[Self.key(deviceID, requestorID)] = tokens == .empty ? nil : tokens }
    }

    /// The authentications stored for `deviceID` under any requestor.
    public func authentications(deviceID: String) throws -> [AuthenticationToken] {
        contents.withLock { contents in
            contents.filter { $0.key.hasPrefix(deviceID + "\u{1F}") }.sorted { $0.key < $1.key }.compactMap(\.value.authentication)
        }
    }

    private static func key(_ deviceID: String, _ requestorID: String) -> String { deviceID + "\u{1F}" + requestorID }
}
