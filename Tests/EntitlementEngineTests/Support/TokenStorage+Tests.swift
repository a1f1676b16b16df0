import EntitlementEngine

extension TokenStorage {
    /// The stored tokens without their version.
    func tokens(deviceID: String, requestorID: String) async throws -> StoredTokens {
        try await load(deviceID: deviceID, requestorID: requestorID).tokens
    }

    /// Writes `tokens` whatever is stored, as another process would after reading the latest version.
    func overwrite(_ tokens: StoredTokens, deviceID: String, requestorID: String) async throws {
        while true {
            let version = try await version(deviceID: deviceID, requestorID: requestorID)
            do throws(TokenStorageError) {
                _ = try await save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: version)
                return
            } catch where error.code == .conflict {
                continue
            }
        }
    }
}
