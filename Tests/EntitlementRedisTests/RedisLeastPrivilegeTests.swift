import EntitlementEngine
import Foundation
import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

/// The store as a user with exactly ``RedisACL/rules(keyPrefix:)`` — its keys, its channels, its
/// commands, nothing else — on a standalone server and on a six-node cluster: saves and loads with their
/// versions, a conflict, the device's requestors, another node hearing of a save, and the V2 credential
/// store's registration under its lock. A command outside the rules is refused, so the rules are in force.
@Suite("The store as a least-privilege Redis user", .serialized, RedisServer.trait)
struct RedisLeastPrivilegeTests {
    static let password = "adm1n-Pa55"
    static let storePassword = "st0re-Pa55"
    static let credentials = RedisCredentials(username: "entitle", password: storePassword)

    /// A server whose user `entitle` has the store's rules.
    static let settings = ["--requirepass", password, "--user", "entitle", "on", ">\(storePassword)"] + RedisACL.rules()

    static func tokens(_ device: String) -> StoredTokens {
        let expires = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000)
        return StoredTokens(authentication: AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u-\(device)", expires: expires), deviceID: device)
    }

    /// What the store does, as the limited user, through `connect()` (each call a new node's client).
    static func exerciseTheStore(_ connect: () async throws -> any RedisCommandSender) async throws {
        let nodeA = RedisTokenStorage(client: try await connect())
        let nodeB = RedisTokenStorage(client: try await connect())
        defer {
            nodeA.client.close()
            nodeB.client.close()
        }
        let heard = RedisTokenStorageTests.Heard()
        let observation = nodeB.observeSaves { device, requestor in heard.add(device + "/" + requestor) }
        defer { observation.cancel() }
        for device in ["d-1", "d-2", "d-3"] {
            _ = try await nodeB.version(deviceID: device, requestorID: "r")  // node B serves these devices
            let saved = tokens(device)
            let version = try await nodeA.save(saved, deviceID: device, requestorID: "r", replacing: .absent)
            try await expectEqual(nodeB.load(deviceID: device, requestorID: "r"), VersionedTokens(saved, version: version))
            await #expect(throws: TokenStorageError.self, "a stale version is refused") {
                try await nodeB.save(.empty, deviceID: device, requestorID: "r", replacing: .absent)
            }
            try await expectEqual(nodeB.authentications(deviceID: device).count, 1)
        }
        // Subscribers connect on a thread of their own: later saves are heard once they are in.
        for round in 0..<300 where !heard.all.contains("d-1/r") {
            _ = try await nodeA.save(tokens("d-1"), deviceID: "d-1", requestorID: "r", replacing: try await nodeA.version(deviceID: "d-1", requestorID: "r"))
            if round > 0 { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(heard.all.contains("d-1/r"), "node B heard node A's save: \(heard.all)")
        let registry = RedisV2CredentialStore(client: try await connect(), softwareStatement: "statement.jwt")
        defer { registry.client.close() }
        let issued = V2ClientCredentials(clientID: "client", clientSecret: "secret", issuedAtSeconds: 1)
        let registered = try await registry.credentials(replacing: nil) { () throws(BackendError) in issued }
        expectEqual(registered, issued)
        await expectEqual(registry.load(), issued)
    }

    @Test func onAStandaloneServer() async throws {
        let server = try await RedisServer(settings: Self.settings)
        defer { Task { await server.stop() } }
        var configuration = server.configuration()
        configuration.credentials = Self.credentials
        try await Self.exerciseTheStore { try await RedisConnector.connect(configuration) }
        let limited = RedisClient(configuration)
        defer { limited.close() }
        await #expect(throws: RedisError.self, "a key outside the prefix") { try await limited.send(["GET", "other:key"]) }
        await #expect(throws: RedisError.self, "a command outside the rules") { try await limited.send(["FLUSHALL"]) }
    }

    @Test(.enabled(if: RedisClusterServers.toolsInstalled || RedisServer.required, "needs redis-cli (.ci/run installs it)"))
    func onACluster() async throws {
        try await RedisClusterServers.with { cluster in
            for port in cluster.ports {
                let admin = cluster.node(port)
                _ = try await admin.send(["ACL", "SETUSER", "entitle", "on", ">\(Self.storePassword)"] + RedisACL.rules())
                admin.close()
            }
            var configuration = cluster.configuration()
            configuration.credentials = Self.credentials
            try await Self.exerciseTheStore {
                let client = try await RedisConnector.connect(configuration)
                #expect(client is RedisClusterClient, "a cluster: \(type(of: client))")
                return client
            }
        }
    }

    /// The storage article shows exactly these rules.
    @Test func theArticleShowsTheRules() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let article = try String(
            contentsOf: root.appendingPathComponent("Sources/EntitlementEngine/EntitlementEngine.docc/TokensAndStorage.md"), encoding: .utf8)
        #expect(article.contains("ACL SETUSER entitle on >PASSWORD " + RedisACL.rules().joined(separator: " ") + "\n"))
    }
}
