import Synchronization

/// Token storage in memory: the default, and what tests use. Compare-and-set under a lock.
public final class InMemoryTokenStorage: TokenStorage {
    private let contents = Mutex<[String: VersionedTokens]>([:])

    /// Creates an empty store.
    public init() {}

    /// The stored tokens and their version.
    public func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        contents.withLock { $0[Self.key(deviceID, requestorID)] ?? .absent }
    }

    /// Replaces the stored tokens if the version is still `expected`.
    public func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        let key = Self.key(deviceID, requestorID)
        let result: Result<StorageVersion, TokenStorageError> = contents.withLock { contents in
            let current = contents[key]?.version ?? .absent
            guard current == expected else { return .failure(.conflict(current: current)) }
            contents[key] = VersionedTokens(tokens, version: current.next)
            return .success(current.next)
        }
        return try result.get()
    }

    /// The current version (no copy of the tokens).
    public func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        contents.withLock { $0[Self.key(deviceID, requestorID)]?.version ?? .absent }
    }

    /// The authentications stored for `deviceID` under any requestor.
    public func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        contents.withLock { contents in
            contents.filter { $0.key.hasPrefix(deviceID + "\u{1F}") }.sorted { $0.key < $1.key }
                .compactMap(\.value.tokens.authentication)
        }
    }

    private static func key(_ deviceID: String, _ requestorID: String) -> String { deviceID + "\u{1F}" + requestorID }
}
