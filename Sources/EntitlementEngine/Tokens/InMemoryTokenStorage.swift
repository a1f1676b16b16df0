import Synchronization

/// Token storage in memory: the default, and what tests use. Compare-and-set under a lock. Entries
/// are kept by device, then requestor, so a device's logins are found without looking at any other
/// device's (a host with many devices shares one store).
public final class InMemoryTokenStorage: TokenStorage {
    private let contents = Mutex<[String: [String: VersionedTokens]]>([:])

    /// Creates an empty store.
    public init() {}

    /// The stored tokens and their version.
    public func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        contents.withLock { $0[deviceID]?[requestorID] ?? .absent }
    }

    /// Replaces the stored tokens if the version is still `expected`.
    public func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        let result: Result<StorageVersion, TokenStorageError> = contents.withLock { contents in
            let current = contents[deviceID]?[requestorID]?.version ?? .absent
            guard current == expected else { return .failure(.conflict(current: current)) }
            contents[deviceID, default: [:]][requestorID] = VersionedTokens(tokens, version: current.next)
            return .success(current.next)
        }
        return try result.get()
    }

    /// The current version (no copy of the tokens).
    public func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        contents.withLock { $0[deviceID]?[requestorID]?.version ?? .absent }
    }

    /// The authentications stored for `deviceID` under any requestor, in requestor order.
    public func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        contents.withLock { contents in
            (contents[deviceID] ?? [:]).sorted { $0.key < $1.key }.compactMap(\.value.tokens.authentication)
        }
    }
}
