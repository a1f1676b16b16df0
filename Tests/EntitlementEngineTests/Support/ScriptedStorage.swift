import EntitlementEngine
import Synchronization

/// A storage wrapper for tests: it can fail saves, let "another writer" act just before the next
/// save (between the engine's read and its write), and it keeps the history of successful saves.
final class ScriptedStorage: TokenStorage {
    let inner: any TokenStorage
    private struct State {
        var failingSaves = false
        var beforeNextSave: (@Sendable () async -> Void)?
        var history: [(expected: StorageVersion, written: StorageVersion, tokens: StoredTokens)] = []
        var failures = 0
    }
    private let state = Mutex(State())

    init(_ inner: any TokenStorage = InMemoryTokenStorage()) { self.inner = inner }

    /// Saves fail with a system error (a full disk) while true.
    func failSaves(_ failing: Bool) { state.withLock { $0.failingSaves = failing } }

    /// Runs `action` once, just before the next save reaches the store.
    func beforeNextSave(_ action: @escaping @Sendable () async -> Void) { state.withLock { $0.beforeNextSave = action } }

    /// The successful saves, in order.
    var history: [(expected: StorageVersion, written: StorageVersion, tokens: StoredTokens)] { state.withLock { $0.history } }
    /// How many saves failed.
    var failures: Int { state.withLock { $0.failures } }

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
        let (failing, action) = state.withLock { state in
            defer { state.beforeNextSave = nil }
            return (state.failingSaves, state.beforeNextSave)
        }
        if let action { await action() }
        if failing {
            state.withLock { $0.failures += 1 }
            throw .system("write tokens", errno: 28)  // ENOSPC
        }
        let written = try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        state.withLock { $0.history.append((expected, written, tokens)) }
        return written
    }
}
