import EntitlementEngine
import Synchronization

/// Token storage whose saves fail while ``failing`` is set (a full disk, an unreachable store):
/// what the explorer uses to check that a failed save loses nothing and answers every call.
final class FlakyStorage: TokenStorage {
    private let inner = InMemoryTokenStorage()
    private let failingSaves = Mutex(false)

    /// Whether saves fail now.
    var failing: Bool {
        get { failingSaves.withLock { $0 } }
        set { failingSaves.withLock { $0 = newValue } }
    }

    func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        try await inner.load(deviceID: deviceID, requestorID: requestorID)
    }

    func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        try await inner.version(deviceID: deviceID, requestorID: requestorID)
    }

    func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        try await inner.authentications(deviceID: deviceID)
    }

    func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        if failing { throw .unavailable("the explorer failed this save") }
        return try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
    }
}
