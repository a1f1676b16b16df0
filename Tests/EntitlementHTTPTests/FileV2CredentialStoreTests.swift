import EntitlementEngine
import Foundation
import Testing

@testable import EntitlementHTTP

@Suite("Client credentials in a file")
struct FileV2CredentialStoreTests {
    @Test func savedCredentialsComeBackAndOnlyTheOwnerCanReadThem() async throws {
        let path = NSTemporaryDirectory() + "entitle-credentials-" + UUID().uuidString + ".json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = FileV2CredentialStore(path: path)
        #expect(await store.load() == nil)
        let credentials = V2ClientCredentials(clientID: "id-1", clientSecret: "secret-1", issuedAtSeconds: 1_700_000_000)
        await store.save(credentials)
        #expect(await FileV2CredentialStore(path: path).load() == credentials, "a new process reads them")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
    }

    @Test func aDamagedFileCountsAsNone() async throws {
        let path = NSTemporaryDirectory() + "entitle-credentials-" + UUID().uuidString + ".json"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data("{\"client_id\": 3".utf8).write(to: URL(fileURLWithPath: path))
        #expect(await FileV2CredentialStore(path: path).load() == nil)
    }
}
