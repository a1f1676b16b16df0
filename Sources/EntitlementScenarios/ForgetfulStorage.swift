import EntitlementEngine
import Synchronization

/// The store a script's engines share: an in-memory store that can forget the last write it
/// acknowledged (`! storage loses the last write`), as a Redis restarted without persistence or a
/// failover to a replica behind does. The tokens go back to what they were before that write, under a
/// new version (a store never gives a version twice), so every engine sees a change at its next look.
final class ForgetfulStorage: TokenStorage {
    private let inner = InMemoryTokenStorage()
    /// The last acknowledged write: its key and what the store held before it.
    private let lastWrite = Mutex<(deviceID: String, requestorID: String, before: StoredTokens)?>(nil)

    /// Forgets the last acknowledged write; false when there was none.
    func loseLastWrite() async -> Bool {
        guard let write = lastWrite.withLock({ state -> (deviceID: String, requestorID: String, before: StoredTokens)? in
            defer { state = nil }
            return state
        }) else { return false }
        guard let current = try? await inner.version(deviceID: write.deviceID, requestorID: write.requestorID) else { return false }
        return (try? await inner.save(write.before, deviceID: write.deviceID, requestorID: write.requestorID, replacing: current)) != nil
    }

    func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        try await inner.load(deviceID: deviceID, requestorID: requestorID)
    }

    func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        let before = try await inner.load(deviceID: deviceID, requestorID: requestorID)
        let written = try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        lastWrite.withLock { $0 = (deviceID, requestorID, before.tokens) }
        return written
    }

    func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        try await inner.version(deviceID: deviceID, requestorID: requestorID)
    }

    func knownVersion(deviceID: String, requestorID: String) -> StorageVersion? {
        inner.knownVersion(deviceID: deviceID, requestorID: requestorID)
    }

    func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        try await inner.authentications(deviceID: deviceID)
    }
}
