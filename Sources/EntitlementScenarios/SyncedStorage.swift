import EntitlementEngine

/// A token store that does not tell devices apart — a keychain synced across a user's devices, a
/// folder copied to another machine: whatever device asks, it reads and writes `ownerDeviceID`'s
/// tokens. An engine on another device then finds tokens bound to a device that is not its own,
/// which is what `SEC412` is for (`engine NAME device D storage OWNER synced`).
struct SyncedStorage: TokenStorage {
    let inner: any TokenStorage
    let ownerDeviceID: String

    func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        try await inner.load(deviceID: ownerDeviceID, requestorID: requestorID)
    }

    func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        try await inner.save(tokens, deviceID: ownerDeviceID, requestorID: requestorID, replacing: expected)
    }

    func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        try await inner.version(deviceID: ownerDeviceID, requestorID: requestorID)
    }

    func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        try await inner.authentications(deviceID: ownerDeviceID)
    }
}
