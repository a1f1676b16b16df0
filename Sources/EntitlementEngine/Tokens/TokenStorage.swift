/// Where a device's tokens live between calls and sessions: the token storage port.
///
/// Keys are (device id, requestor id). Every value has a ``StorageVersion``; every write is a
/// **compare-and-set** against the version the writer last read, so two engines (threads,
/// processes, nodes) sharing a store never overwrite each other's update: the loser gets
/// ``TokenStorageError/conflict(current:)``, reads again and decides again. The contract, which a
/// network store must keep too, is written out in the *Tokens and storage* article:
///
/// 1. ``load(deviceID:requestorID:)`` returns the tokens with their version (``VersionedTokens/absent``
///    when nothing is stored).
/// 2. ``save(_:deviceID:requestorID:replacing:)`` writes only if the stored version is still
///    `replacing`, atomically, and returns the new version; otherwise it writes nothing and throws
///    ``TokenStorageError/conflict(current:)``. A save of ``StoredTokens/empty`` keeps a version
///    (never goes back to ``StorageVersion/absent``), so an old version can never match again.
/// 3. ``version(deviceID:requestorID:)`` returns the current version and should be cheap: the
///    engine asks it before every input and reads the tokens only when it changed.
/// 4. A failure throws a ``TokenStorageError`` and changes nothing; it is never reported as saved.
///
/// Implementations must be safe to call from any task, and finish what they were asked — or fail on
/// their own deadline — even when the calling task is cancelled: the engine runs a step's storage calls
/// on the task of a caller whose call queued work, and a half-done save is not that caller's to abandon
/// (`RedisTokenStorage` runs each operation on a task of its own for this).
public protocol TokenStorage: Sendable {
    /// The tokens stored for `deviceID` and `requestorID`, with their version.
    func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens
    /// Replaces the tokens if the store still holds `expected`; returns the new version.
    func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    /// The current version of the tokens for `deviceID` and `requestorID` (cheaper than a load).
    func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion
    /// Every authentication stored for `deviceID`, by any requestor: what single sign-on across
    /// apps sharing this storage starts from. The default finds none (no single sign-on).
    func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken]
    /// The current version when the store knows it without waiting — no network, no suspension (a store
    /// in memory; a file whose identity has not changed) — or nil when it must be asked with
    /// ``version(deviceID:requestorID:)``. The engine checks the version before every input: an answer
    /// here spares the engine's actor a hop off and back. It must be as current as `version` would be.
    /// The default is nil.
    func knownVersion(deviceID: String, requestorID: String) -> StorageVersion?
}

extension TokenStorage {
    /// The version, by loading the tokens (correct; stores with a cheaper way should implement it).
    public func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        try await load(deviceID: deviceID, requestorID: requestorID).version
    }

    /// No single sign-on: a storage that cannot list a device's tokens finds none.
    public func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] { [] }

    /// Nil: the store must be asked.
    public func knownVersion(deviceID: String, requestorID: String) -> StorageVersion? { nil }
}
