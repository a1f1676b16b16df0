import EntitlementEngine

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `entitle storage-stress DIR`: saves two alternating token sets to a file store as fast as it can,
/// until killed. The file-store crash test kills it mid-write many times and checks that the store
/// always reads back as one of the two sets. Saves are compare-and-sets: a save that loses to
/// another writer takes the stored version and writes again.
enum StorageStress {
    /// The two sets, told apart by their selected provider.
    static func tokens(_ variant: Int) -> StoredTokens {
        StoredTokens(
            authentication: AuthenticationToken(
                mvpdID: "acme-cable", requestorID: "stress", userID: String(repeating: variant == 0 ? "a" : "b", count: 4000),
                expires: Timestamp(milliseconds: 9_999_999_999_999)),
            selectedProvider: variant == 0 ? "acme-cable" : "bluesky-tv", deviceID: "stress-device")
    }

    static func run(folder: String) async -> Int32 {
        // Stops when the process that started it is gone (a test run that ended early must not leave it
        // writing for ever): the child is then handed to another parent.
        let parent = getppid()
        guard let storage = try? FileTokenStorage(folder: folder) else { return 2 }
        var variant = 0
        var version = StorageVersion.absent
        print("ready")
        fflush(nil)
        while getppid() == parent {
            do throws(TokenStorageError) {
                version = try await storage.save(
                    tokens(variant), deviceID: "stress-device", requestorID: "stress", replacing: version)
            } catch where error.code == .conflict {
                version = error.current ?? version
                continue
            } catch {
                print("save failed: \(error)")
                return 1
            }
            variant = 1 - variant
        }
        return 1
    }
}
