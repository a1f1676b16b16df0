import EntitlementEngine
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

@testable import EntitlementHTTP

@Suite("Client credentials in a file")
struct FileV2CredentialStoreTests {
    @Test func savedCredentialsComeBackAndOnlyTheOwnerCanReadThem() async throws {
        let path = ScratchSpace.path("entitle-credentials-", ending: ".json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let store = FileV2CredentialStore(path: path)
        #expect(await store.load() == nil)
        let credentials = V2ClientCredentials(clientID: "id-1", clientSecret: "secret-1", issuedAtSeconds: 1_700_000_000)
        await store.save(credentials)
        await expectEqual(FileV2CredentialStore(path: path).load(), credentials, "a new process reads them")
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        expectEqual(mode, 0o600)
        #expect(!FileManager.default.fileExists(atPath: path + ".tmp"))
    }

    /// The file is the registration answer in a versioned envelope; a bare answer (as files were
    /// written before the envelope) reads as format 1.
    @Test func theFileSaysItsFormatAndABareAnswerStillReads() async throws {
        let path = ScratchSpace.path("entitle-credentials-", ending: ".json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let credentials = V2ClientCredentials(clientID: "id-1", clientSecret: "secret-1", issuedAtSeconds: 1_700_000_000)
        await FileV2CredentialStore(path: path).save(credentials)
        let written = try JSONReader.read(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(written["format"] == .int(1) && written["credentials"]?["client_id"] == "id-1")
        try Data(credentials.json.canonicalBytes).write(to: URL(fileURLWithPath: path))
        await expectEqual(FileV2CredentialStore(path: path).load(), credentials)
    }

    /// With sealing the file holds no client secret in clear; a store without the key refuses it
    /// (clearly) rather than registering over it.
    @Test func aSealedFileHoldsNoSecretAndOnlyItsKeyOpensIt() async throws {
        let path = ScratchSpace.path("entitle-credentials-", ending: ".json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let credentials = V2ClientCredentials(clientID: "id-7", clientSecret: "s3cr3t-client-value", issuedAtSeconds: 1)
        await FileV2CredentialStore(path: path, sealing: TestOnlySealing(key: "fleet-key")).save(credentials)
        let text = String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self)
        #expect(text.hasPrefix("sealed:1:") && !text.contains("s3cr3t") && !text.contains("id-7"))
        await expectEqual(FileV2CredentialStore(path: path, sealing: TestOnlySealing(key: "fleet-key")).load(), credentials)
        do {
            _ = try await FileV2CredentialStore(path: path).credentials(replacing: nil) { () async throws(BackendError) -> V2ClientCredentials in
                Issue.record("registered over sealed credentials")
                return credentials
            }
            Issue.record("a store without the key read sealed credentials")
        } catch {
            #expect(error.code == .clientCredentials && error.message.contains("sealed"), "\(error)")
        }
    }

    /// New credentials the store cannot write are a failure, not kept in memory only (the next start
    /// would register yet another client).
    @Test func credentialsItCannotWriteAreAFailure() async throws {
        let path = ScratchSpace.path("entitle-no-such-folder-", ending: "/credentials.json")
        do {
            _ = try await FileV2CredentialStore(path: path).credentials(replacing: nil) { () async throws(BackendError) -> V2ClientCredentials in
                V2ClientCredentials(clientID: "new", clientSecret: "new-secret", issuedAtSeconds: 1)
            }
            Issue.record("credentials that were not kept were handed out")
        } catch {
            #expect(error.code == .clientCredentials && error.message.contains("could not be written"), "\(error)")
        }
    }

    /// A file this version cannot read — damaged, or in a newer format — is refused with a clear error
    /// and left as it is: registering again would make a new client and lose the users' profiles.
    @Test(arguments: [
        (#"{"client_id": 3"#, "not JSON"),
        (#"{"credentials":{"client_id":"id-2","client_secret":"s"},"format":2}"#, "format 2, written by a newer version"),
        (#"{"client":"x"}"#, "holds no client credentials"),
    ])
    func aFileItCannotReadIsRefusedNotReplaced(text: String, words: String) async throws {
        let path = ScratchSpace.path("entitle-credentials-", ending: ".json")
        defer { try? FileManager.default.removeItem(atPath: path) }
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let store = FileV2CredentialStore(path: path)
        #expect(await store.load() == nil)
        let registered = V2ClientCredentials(clientID: "new", clientSecret: "new-secret", issuedAtSeconds: 1)
        do {
            _ = try await store.credentials(replacing: nil) { () async throws(BackendError) -> V2ClientCredentials in
                Issue.record("registered over a file it could not read")
                return registered
            }
            Issue.record("a file it cannot read was taken")
        } catch {
            #expect(error.code == .clientCredentials && error.message.contains(words) && error.message.contains(path), "\(error)")
        }
        expectEqual(String(decoding: try Data(contentsOf: URL(fileURLWithPath: path)), as: UTF8.self), text, "left as it was")
    }
}
