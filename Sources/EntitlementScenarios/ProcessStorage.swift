import EntitlementEngine
import Synchronization

/// One engine's view of a shared token store: its saves can be made to fail (`! storage fails
/// saves`), and it is cut when the engine's process dies (`! engine restarts`) — a dead process
/// writes nothing more, whatever its timers and late answers make it try.
final class ProcessStorage: TokenStorage {
    private struct State {
        var ended = false
        /// How many saves still fail; nil: every one until healed.
        var failingSaves: Int? = 0
        /// How many saves still fail as an unreachable store does (for a moment).
        var unavailableSaves = 0
        /// How many reads (a version, the tokens) still fail as an unreachable store does.
        var unavailableReads = 0
    }

    private let inner: any TokenStorage
    private let state = Mutex(State())

    init(_ inner: any TokenStorage) { self.inner = inner }

    /// From now on every operation fails and the store is untouched.
    func end() { state.withLock { $0.ended = true } }

    /// The next save fails (or, with `untilHealed`, every save until ``heal()``), as a full disk would.
    func failSaves(untilHealed: Bool) { state.withLock { $0.failingSaves = untilHealed ? nil : 1 } }

    /// The next `saves` saves fail as a store that is away for a moment does (a restart, a failover).
    func makeUnavailable(forSaves saves: Int) { state.withLock { $0.unavailableSaves = saves } }

    /// The next `reads` reads (a version, the tokens) fail as a store that is away for a moment does.
    func makeUnreadable(forReads reads: Int) { state.withLock { $0.unavailableReads = reads } }

    /// Saves and reads succeed again.
    func heal() {
        state.withLock { state in
            state.failingSaves = 0
            state.unavailableSaves = 0
            state.unavailableReads = 0
        }
    }

    /// Fails this read when it is one that must fail (counting it).
    private func read() throws(TokenStorageError) {
        let away = state.withLock { state in
            defer { state.unavailableReads = max(0, state.unavailableReads - 1) }
            return state.unavailableReads > 0
        }
        if away { throw .unavailable("the store is restarting (LOADING)") }
    }

    private func alive() throws(TokenStorageError) {
        if state.withLock({ $0.ended }) { throw .closed("the engine's process ended") }
    }

    /// Whether this save is one that must fail (counting it).
    private func saveFails() -> Bool {
        state.withLock { state in
            switch state.failingSaves {
            case nil: return true
            case let count? where count > 0:
                state.failingSaves = count - 1
                return true
            default: return false
            }
        }
    }

    func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        try alive()
        try read()
        return try await inner.load(deviceID: deviceID, requestorID: requestorID)
    }

    func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        try alive()
        if saveFails() { throw .system("write tokens", errno: 28) }  // ENOSPC
        let away = state.withLock { state in
            defer { state.unavailableSaves = max(0, state.unavailableSaves - 1) }
            return state.unavailableSaves > 0
        }
        if away { throw .unavailable("the store is restarting (LOADING)") }
        return try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
    }

    func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        try alive()
        try read()
        return try await inner.version(deviceID: deviceID, requestorID: requestorID)
    }

    func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        try alive()
        return try await inner.authentications(deviceID: deviceID)
    }
}
