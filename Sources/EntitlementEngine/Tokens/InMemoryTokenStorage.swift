import Synchronization

/// Token storage in memory: the default, and what tests use. Compare-and-set under a lock. Entries
/// are kept by device, then requestor, so a device's logins are found without looking at any other
/// device's (a host with many devices shares one store). Engines sharing one store learn of each
/// other's saves at once (``TokenSaveNotifying``).
public final class InMemoryTokenStorage: TokenSaveNotifying {
    /// The entries by device, then requestor; and each entry's version alone, by both, so the version an
    /// engine checks before every input is one lookup that copies no tokens (about 60 bytes an entry).
    private struct Contents {
        var entries: [String: [String: VersionedTokens]] = [:]
        var versions: [Entry: StorageVersion] = [:]
    }
    /// An entry's device and requestor.
    private struct Entry: Hashable {
        let deviceID: String
        let requestorID: String
    }

    private let contents = Mutex(Contents())
    private let observers = Mutex<(next: UInt64, handlers: [UInt64: @Sendable (String, String) -> Void])>((0, [:]))

    /// Creates an empty store.
    public init() {}

    /// The stored tokens and their version.
    public func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        contents.withLock { $0.entries[deviceID]?[requestorID] ?? .absent }
    }

    /// Replaces the stored tokens if the version is still `expected`.
    public func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        let entry = Entry(deviceID: deviceID, requestorID: requestorID)
        let result: Result<StorageVersion, TokenStorageError> = contents.withLock { contents in
            let current = contents.versions[entry] ?? .absent
            guard current == expected else { return .failure(.conflict(current: current)) }
            contents.entries[deviceID, default: [:]][requestorID] = VersionedTokens(tokens, version: current.next)
            contents.versions[entry] = current.next
            return .success(current.next)
        }
        let version = try result.get()
        for handler in observers.withLock({ Array($0.handlers.values) }) { handler(deviceID, requestorID) }
        return version
    }

    /// Calls `handler` after every save, outside the store's lock.
    public func observeSaves(_ handler: @escaping @Sendable (_ deviceID: String, _ requestorID: String) -> Void) -> SaveObservation {
        let id = observers.withLock { observers -> UInt64 in
            observers.next += 1
            observers.handlers[observers.next] = handler
            return observers.next
        }
        return SaveObservation { [weak self] in self?.observers.withLock { _ = $0.handlers.removeValue(forKey: id) } }
    }

    /// The current version (no copy of the tokens).
    public func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        let entry = Entry(deviceID: deviceID, requestorID: requestorID)
        return contents.withLock { $0.versions[entry] ?? .absent }
    }

    /// The current version, always known here.
    public func knownVersion(deviceID: String, requestorID: String) -> StorageVersion? {
        let entry = Entry(deviceID: deviceID, requestorID: requestorID)
        return contents.withLock { $0.versions[entry] ?? .absent }
    }

    /// The authentications stored for `deviceID` under any requestor, in requestor order.
    public func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        contents.withLock { contents in
            (contents.entries[deviceID] ?? [:]).sorted { $0.key < $1.key }.compactMap(\.value.tokens.authentication)
        }
    }
}
