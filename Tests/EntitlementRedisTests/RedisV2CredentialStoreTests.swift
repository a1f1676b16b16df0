import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

/// Client credentials a fleet shares on redis-server: one registration for every node, also when they
/// start together, when the service rejects the client, or when the node registering dies.
@Suite("V2 client credentials on redis-server", RedisServer.trait)
struct RedisV2CredentialStoreTests {
    static let statement = SimulatedClientRegistrar.softwareStatement

    /// Registrations made, each taking a moment (so nodes that start together overlap).
    final class Registrations: Sendable {
        private let made = Mutex(0)
        var count: Int { made.withLock { $0 } }

        var register: @Sendable () async throws(BackendError) -> V2ClientCredentials {
            { () async throws(BackendError) -> V2ClientCredentials in
                let number = self.made.withLock { made -> Int in
                    made += 1
                    return made
                }
                try? await Task.sleep(for: .milliseconds(300))
                return V2ClientCredentials(clientID: "client-\(number)", clientSecret: "secret-\(number)", issuedAtSeconds: 1)
            }
        }
    }

    @Test func nodesStartingTogetherRegisterOnceAndShareTheCredentials() async throws {
        let server = try await RedisServer()
        let registrations = Registrations()
        let clients = (0..<4).map { _ in RedisClient(server.configuration()) }
        let got = try await withThrowingTaskGroup(of: V2ClientCredentials.self) { group in
            for client in clients {
                group.addTask {
                    try await RedisV2CredentialStore(client: client, softwareStatement: Self.statement)
                        .credentials(replacing: nil, registering: registrations.register)
                }
            }
            return try await group.reduce(into: [V2ClientCredentials]()) { $0.append($1) }
        }
        expectEqual(registrations.count, 1)
        expectEqual(Set(got.map(\.clientID)), ["client-1"])
        await expectEqual(RedisV2CredentialStore(client: clients[0], softwareStatement: Self.statement).load()?.clientID, "client-1")
        for client in clients { client.close() }
        await server.stop()
    }

    @Test func rejectedCredentialsAreReplacedOnceForTheFleetAndNewerOnesAreKept() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let store = RedisV2CredentialStore(client: client, softwareStatement: Self.statement)
        let old = V2ClientCredentials(clientID: "old", clientSecret: "s", issuedAtSeconds: 1)
        await store.save(old)
        let registrations = Registrations()
        // Every node saw the service reject `old` at about the same moment.
        let got = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<3 {
                group.addTask { try await store.credentials(replacing: old, registering: registrations.register).clientID }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
        #expect(registrations.count == 1 && got == ["client-1", "client-1", "client-1"])
        // A node that learns late that `old` was rejected takes the replacement, it does not register again.
        try await expectEqual(store.credentials(replacing: old, registering: registrations.register).clientID, "client-1")
        expectEqual(registrations.count, 1)
        client.close()
        await server.stop()
    }

    @Test func aLockWhoseHolderDiedExpiresAndTheNextNodeRegisters() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let store = RedisV2CredentialStore(client: client, softwareStatement: Self.statement)
        // A node took the lock and died before it stored anything.
        _ = try await client.send(["SET", store.key + ":registering", "dead-node", "PX", "700"])
        let registrations = Registrations()
        let started = ContinuousClock.now
        let got = try await store.credentials(replacing: nil, registering: registrations.register)
        #expect(got.clientID == "client-1" && registrations.count == 1)
        #expect(ContinuousClock.now - started >= .milliseconds(600), "it waited for the dead node's lock to expire")
        try await expectEqual(client.send(["EXISTS", store.key + ":registering"]), .integer(0), "the lock is released")
        client.close()
        await server.stop()
    }

    @Test func aStoreRedisCannotReachIsAFailureAndNeverARegistration() async throws {
        let (fd, port) = try RedisServer.refusingPort()
        defer { close(fd) }
        let client = RedisClient(RedisConfiguration(port: port, connectTimeout: .milliseconds(300)))
        let registrations = Registrations()
        let store = RedisV2CredentialStore(client: client, softwareStatement: Self.statement)
        await #expect(throws: BackendError.self) { try await store.credentials(replacing: nil, registering: registrations.register) }
        expectEqual(registrations.count, 0)
        #expect(await store.load() == nil)
        client.close()
    }

    /// Two nodes' `V2Client`s on one store, against the simulated service: their first requests at once
    /// make one client there.
    @Test func twoNodesClientsMakeOneClientAtTheService() async throws {
        let server = try await RedisServer()
        let clock = ManualClock()
        let service = SimulatedV2Service(simulator: Simulator(clock: clock), throttles: false)
        let redis = [RedisClient(server.configuration()), RedisClient(server.configuration())]
        let nodes = redis.map {
            V2Client(
                transport: service, softwareStatement: Self.statement,
                credentials: RedisV2CredentialStore(client: $0, softwareStatement: Self.statement), baseURL: "https://sp.sim", clock: clock)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for node in nodes {
                group.addTask { _ = try await node.perform(.configuration(RequestContext(requestorID: "sim-requestor", deviceID: "d"))) }
            }
            try await group.waitForAll()
        }
        expectEqual(service.registrar.clientCount, 1)
        for client in redis { client.close() }
        await server.stop()
    }

    /// `entitle register` against `entitle serve`: registers once into Redis, prints the client id and
    /// never the secret; run again, it keeps what is stored.
    @Test func entitleRegisterStoresTheClientOnceAndPrintsOnlyItsID() async throws {
        let server = try await RedisServer()
        let folder = ScratchSpace.path("entitle-register-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try (Self.statement + "\n").write(toFile: folder + "/statement", atomically: true, encoding: .utf8)
        let entitle = RedisTwoNodeTests.entitle.path
        let serve = try ChildProcess.spawn(entitle, ["serve", "--port", "0", "--quiet"], output: .file(folder + "/serve.log"))
        // Killed and reaped on a thread of its own: a defer cannot await.
        defer {
            serve.send(SIGKILL)
            OwnThread.start { _ = serve.waitForExit() }
        }
        var url = ""
        for _ in 0..<300 where url.isEmpty {
            try await Task.sleep(for: .milliseconds(50))
            let text = (try? String(contentsOfFile: folder + "/serve.log", encoding: .utf8)) ?? ""
            url = text.split(separator: "\n").first.flatMap { $0.split(separator: " ").last }.map(String.init) ?? ""
        }
        let arguments = ["register", "--adobe", url, "--statement", folder + "/statement", "--store", "redis://127.0.0.1:\(server.port)"]
        let first = try await RedisServer.onThread { Result { try ChildProcess.run(entitle, arguments) } }.get()
        let client = RedisClient(server.configuration())
        let stored = try #require(await RedisV2CredentialStore(client: client, softwareStatement: Self.statement).load())
        let printed = String(decoding: first.output, as: UTF8.self)
        #expect(first.termination == .exited(0) && printed == "registered: client id \(stored.clientID)\n", "\(printed)")
        #expect(!printed.contains(stored.clientSecret) && !String(decoding: first.errors, as: UTF8.self).contains(stored.clientSecret))
        let second = try await RedisServer.onThread { Result { try ChildProcess.run(entitle, arguments) } }.get()
        expectEqual(String(decoding: second.output, as: UTF8.self), "already registered: client id \(stored.clientID)\n")
        await expectEqual(RedisV2CredentialStore(client: client, softwareStatement: Self.statement).load(), stored, "kept, not replaced")
        client.close()
        await server.stop()
    }
}

/// Tokens sealed at rest on redis-server: no planted personal data in what Redis holds, and a node
/// without the key refuses them.
@Suite("Sealed tokens on redis-server", RedisServer.trait)
struct RedisSealedTokensTests {
    @Test func redisHoldsNoPersonalDataInClearAndANodeWithoutTheKeyRefuses() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let sealed = RedisTokenStorage(client: client, sealing: TestOnlySealing(key: "fleet-key"))
        let device = "planted-device-7731"
        let token = AuthenticationToken(
            mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "planted-user-4410", expires: Timestamp(milliseconds: 9_999_999_999_999),
            metadata: ["householdID": .text("planted-household-9920"), "zip": .list(["90210-PLANTED"])])
        let tokens = StoredTokens(authentication: token, selectedProvider: "acme-cable", deviceID: device)
        _ = try await sealed.save(tokens, deviceID: device, requestorID: "sim-requestor", replacing: .absent)
        // Everything Redis holds, every key and value, as text.
        var held = ""
        guard case .array(let keys?) = try await client.send(["KEYS", "*"]) else { throw RedisError.unexpectedReply("KEYS") }
        for key in keys.compactMap(\.text) {
            held += key + " "
            switch try await client.send(["TYPE", key]).text {
            case "hash": if case .array(let fields?) = try await client.send(["HGETALL", key]) { held += fields.compactMap(\.text).joined(separator: " ") }
            case "set": if case .array(let members?) = try await client.send(["SMEMBERS", key]) { held += members.compactMap(\.text).joined(separator: " ") }
            default: held += try await client.send(["GET", key]).text ?? ""
            }
            held += " "
        }
        #expect(held.contains("sealed:1:"), "the tokens are there, sealed: \(held.prefix(300))")
        for value in ["planted-device-7731", "planted-user-4410", "planted-household-9920", "90210-PLANTED"] {
            #expect(!held.contains(value), "\(value) is in Redis in clear")
        }
        try await expectEqual(sealed.load(deviceID: device, requestorID: "sim-requestor").tokens, tokens)
        try await expectEqual(sealed.authentications(deviceID: device), [token])
        let keyless = RedisTokenStorage(client: client)
        await #expect(throws: TokenStorageError.unsealable("this store has no sealing; give it the fleet's")) {
            try await keyless.load(deviceID: device, requestorID: "sim-requestor")
        }
        client.close()
        await server.stop()
    }
}
