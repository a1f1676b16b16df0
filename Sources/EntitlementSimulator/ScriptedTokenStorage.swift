import EntitlementEngine
import Synchronization

/// Token storage for tests and explorers: it wraps a store, can fail saves (a full disk), lets
/// "another writer" act just before the next save (between the engine's read and its write), and
/// keeps the history of successful saves.
package final class ScriptedTokenStorage: TokenStorage {
    /// The store underneath (write to it to play another writer).
    package let inner: any TokenStorage
    private struct State {
        var failingSaves = false
        var beforeNextSave: (@Sendable () async -> Void)?
        var history: [(expected: StorageVersion, written: StorageVersion, tokens: StoredTokens)] = []
    }
    private let state = Mutex(State())

    /// Wraps `inner` (a new in-memory store by default).
    package init(_ inner: any TokenStorage = InMemoryTokenStorage()) { self.inner = inner }

    /// Saves fail with a system error (a full disk) while true.
    package func failSaves(_ failing: Bool) { state.withLock { $0.failingSaves = failing } }

    /// Runs `action` once, just before the next save reaches the store.
    package func beforeNextSave(_ action: @escaping @Sendable () async -> Void) { state.withLock { $0.beforeNextSave = action } }

    /// The successful saves, in order.
    package var history: [(expected: StorageVersion, written: StorageVersion, tokens: StoredTokens)] { state.withLock { $0.history } }

    /// The inner store's tokens.
    package func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        try await inner.load(deviceID: deviceID, requestorID: requestorID)
    }

    /// The inner store's version.
    package func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        try await inner.version(deviceID: deviceID, requestorID: requestorID)
    }

    /// The wrapped store's version at hand, if it has one (saves change it only when they are made).
    package func knownVersion(deviceID: String, requestorID: String) -> StorageVersion? {
        inner.knownVersion(deviceID: deviceID, requestorID: requestorID)
    }

    /// The inner store's authentications.
    package func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        try await inner.authentications(deviceID: deviceID)
    }

    /// Fails while ``failSaves(_:)`` is on; otherwise runs the planted action, then saves and records it.
    package func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        let (failing, action) = state.withLock { state in
            defer { state.beforeNextSave = nil }
            return (state.failingSaves, state.beforeNextSave)
        }
        if let action { await action() }
        if failing {
            throw .system("write tokens", errno: 28)  // ENOSPC
        }
        let written = try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        state.withLock { $0.history.append((expected, written, tokens)) }
        return written
    }
}
