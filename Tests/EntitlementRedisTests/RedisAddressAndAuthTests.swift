import EntitlementEngine
import Foundation
import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

@Suite("Redis addresses, URLs and sign-in")
struct RedisURLTests {
    @Test(arguments: [
        ("redis://localhost", RedisURL(host: "localhost")),
        ("redis://10.0.0.5:6380", RedisURL(host: "10.0.0.5", port: 6380)),
        ("redis://:s3cret@cache.internal:6379/2", RedisURL(host: "cache.internal", credentials: RedisCredentials(password: "s3cret"), database: 2)),
        ("redis://alice:p%40ss%2Fw%3Ard@h", RedisURL(host: "h", credentials: RedisCredentials(username: "alice", password: "p@ss/w:rd"))),
        ("redis://alice:pa/ss@h:7000/0", RedisURL(host: "h", port: 7000, credentials: RedisCredentials(username: "alice", password: "pa/ss"))),
        ("redis://[::1]:6390/5", RedisURL(host: "::1", port: 6390, database: 5)),
        ("redis://[fe80::1]", RedisURL(host: "fe80::1")),
        ("redis://h/", RedisURL(host: "h")),
    ])
    func aURLGivesItsParts(text: String, expected: RedisURL) throws {
        try expectEqual(RedisURL.parse(text), expected)
    }

    @Test(arguments: [
        ("http://h", "starts with redis://"),
        ("rediss://h:6380", "TLS tunnel"),
        ("redis://", "no host"),
        ("redis://h:0", "port"),
        ("redis://h:65536", "port"),
        ("redis://h:x", "port"),
        ("redis://h/db", "database number"),
        ("redis://h/-1", "database number"),
        ("redis://alice@h", "user:password"),
        ("redis://alice:@h", "password is empty"),
        ("redis://:p%4@h", "bad %-escape"),
        ("redis://:p%FF@h", "not UTF-8"),
        ("redis://[::1", "closing ]"),
        ("redis://:pw@127.0.0.1:6379:1", "more than one port"),
        ("redis://::1", "more than one port"),
        ("redis://[::1]x", "after its IPv6 host"),
        ("redis://h?timeout=1", "no query"),
        ("redis://h%20x", "host holds"),
    ])
    func aBadURLIsRefusedByNameWithoutTheURL(text: String, words: String) {
        #expect(throws: RedisURLError.self) { try RedisURL.parse(text) }
        do {
            _ = try RedisURL.parse(text)
        } catch {
            #expect(error.description.contains(words), "\(error)")
            #expect(!error.description.contains(text), "the URL (it may hold a password) is never repeated")
        }
    }

    /// Mutated URLs (seeded): every one parses or is refused with a typed error — never a trap — and a
    /// parsed password never shows in the configuration's description.
    @Test func mutatedURLsAreReadOrRefusedNeverATrap() {
        var random = SystemRandomNumberGenerator()
        let seeds = ["redis://alice:pa%20ss@h:6379/2", "redis://[::1]:7000", "redis://:x@[fe80::1%25eth0]:1/9", "rediss://h"]
        let alphabet = Array("redis:/@[]%:.?#0123456789abcdefABCDEF-_~ \u{0}\u{7F}é".unicodeScalars)
        for round in 0..<3000 {
            var scalars = Array(seeds[round % seeds.count].unicodeScalars)
            for _ in 0..<Int.random(in: 1...4, using: &random) {
                let at = Int.random(in: 0...scalars.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: scalars.insert(alphabet.randomElement(using: &random)!, at: at)
                case 1 where at < scalars.count: scalars.remove(at: at)
                default: if at < scalars.count { scalars[at] = alphabet.randomElement(using: &random)! }
                }
            }
            var text = ""
            text.unicodeScalars.append(contentsOf: scalars)
            if let parsed = try? RedisURL.parse(text), let password = parsed.credentials?.password, password.count >= 3 {
                let configuration = RedisConfiguration(host: parsed.host, port: parsed.port, credentials: parsed.credentials)
                #expect(!configuration.description.contains(":\(password)@"), "\(text)")
            }
        }
    }

    @Test func anOverlongURLIsRefused() {
        #expect(throws: RedisURLError.self) { try RedisURL.parse("redis://" + String(repeating: "a", count: 5000)) }
    }

    @Test func noDescriptionShowsThePassword() throws {
        let configuration = try RedisConfiguration(url: "redis://alice:Tr0ub4dor%263@cache.internal:6380/3")
        let password = "Tr0ub4dor&3"
        expectEqual(configuration.credentials?.password, password)
        expectEqual(configuration.description, "redis://alice:•••@cache.internal:6380/3")
        var dumped = ""
        dump(configuration, to: &dumped)
        for text in [configuration.description, String(describing: configuration), String(reflecting: configuration), dumped,
            "\(configuration.credentials!)", String(reflecting: configuration.credentials!)]
        {
            #expect(!text.contains(password) && !text.contains("Tr0ub4dor"), "\(text)")
        }
        expectEqual(RedisConfiguration(host: "::1", port: 7000).description, "redis://[::1]:7000")
    }
}

@Suite("Redis sign-in against redis-server", .serialized, RedisServer.trait)
struct RedisAuthenticationTests {
    static let password = "s3cr3t-Pa55"
    static let alicePassword = "al1ce-Pa55"
    static let settings = [
        "--requirepass", password, "--user", "alice", "on", ">\(alicePassword)", "~*", "&*", "+@all",
        "--user", "limited", "on", ">\(alicePassword)", "~*", "&*", "+@all", "-@dangerous",
    ]

    /// A common least-privilege user (`+@all -@dangerous`: no `INFO`, `KEYS`, `FLUSHALL`, …) connects
    /// through ``RedisConnector`` and runs the store: save, load, version, the device's requestors.
    /// (0.9.2's connector asked `INFO cluster` and was refused `NOPERM`.)
    @Test func aUserWithoutDangerousCommandsRunsTheStore() async throws {
        let server = try await RedisServer(settings: Self.settings)
        defer { Task { await server.stop() } }
        var configuration = server.configuration()
        configuration.credentials = RedisCredentials(username: "limited", password: Self.alicePassword)
        let client = try await RedisConnector.connect(configuration)
        defer { (client as? RedisClient)?.close() }
        #expect(client is RedisClient, "a standalone server: \(type(of: client))")
        let store = RedisTokenStorage(client: client)
        let token = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + 3_600_000))
        let tokens = StoredTokens(authentication: token, deviceID: "d")
        let version = try await store.save(tokens, deviceID: "d", requestorID: "r", replacing: .absent)
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), VersionedTokens(tokens, version: version))
        try await expectEqual(store.version(deviceID: "d", requestorID: "r"), version)
        try await expectEqual(store.authentications(deviceID: "d"), [token])
        // Wrong credentials are still refused as such.
        configuration.credentials = RedisCredentials(username: "limited", password: "wrong-Pa55")
        await #expect(throws: RedisError.self) { _ = try await RedisConnector.connect(configuration) }
    }

    /// PING on a fresh client for `configuration`: its answer, or the error.
    private func ping(_ configuration: RedisConfiguration) async -> Result<RESPValue, RedisError> {
        let client = RedisClient(configuration)
        defer { client.close() }
        do throws(RedisError) {
            return .success(try await client.send(["PING"]))
        } catch {
            return .failure(error)
        }
    }

    @Test func aPasswordOrAnACLUserSignsInAndAWrongOneIsATypedErrorWithoutIt() async throws {
        let server = try await RedisServer(settings: Self.settings)
        defer { Task { await server.stop() } }
        var configuration = server.configuration()
        guard case .failure(let asked) = await ping(configuration), asked.code == .authentication else {
            Issue.record("a client without credentials must be asked for them")
            return
        }
        let demand = asked.message
        #expect(demand.hasPrefix("NOAUTH"))

        configuration.credentials = RedisCredentials(password: "wrong-Pa55")
        let refused = await ping(configuration)
        guard case .failure(let error) = refused, error.code == .authentication else {
            Issue.record("a wrong password must be refused: \(refused)")
            return
        }
        let words = error.message
        #expect(words.hasPrefix("WRONGPASS"))
        #expect(!error.description.contains("wrong-Pa55") && !error.description.contains(Self.password))

        configuration.credentials = RedisCredentials(password: Self.password)
        try await expectEqual(ping(configuration).get(), .simpleString("PONG"))

        configuration.credentials = RedisCredentials(username: "alice", password: Self.alicePassword)
        let client = RedisClient(configuration)
        defer { client.close() }
        try await expectEqual(client.send(["ACL", "WHOAMI"]).text, "alice")
    }

    /// One `HELLO 2 AUTH … SETNAME …` signs in and names the connection where the server has `HELLO`;
    /// a server without it (Redis 5, here `HELLO` renamed away) gets `AUTH` and `CLIENT SETNAME`, and a
    /// wrong password is refused alike, its text nowhere in the error (Redis repeats the arguments of a
    /// command it does not know).
    @Test func helloSignsInInOneCommandAndAServerWithoutItGetsAUTH() async throws {
        for hasHello in [true, false] {
            let server = try await RedisServer(settings: Self.settings + (hasHello ? [] : ["--rename-command", "HELLO", ""]))
            defer { Task { await server.stop() } }
            var configuration = server.configuration()
            configuration.credentials = RedisCredentials(username: "alice", password: Self.alicePassword)
            configuration.clientName = "entitle-hello"
            let client = RedisClient(configuration)
            defer { client.close() }
            try await expectEqual(client.send(["ACL", "WHOAMI"]).text, "alice")
            try await expectEqual(client.send(["CLIENT", "GETNAME"]).text, "entitle-hello")
            let stats = try await client.send(["INFO", "commandstats"]).text ?? ""
            expectEqual(stats.contains("cmdstat_hello:"), hasHello, "\(stats)")
            expectEqual(stats.contains("cmdstat_auth:"), !hasHello, "\(stats)")

            configuration.credentials = RedisCredentials(username: "alice", password: "wrong-Pa55")
            let refused = await ping(configuration)
            guard case .failure(let error) = refused, error.code == .authentication else {
                Issue.record("a wrong password must be refused: \(refused)")
                continue
            }
            let words = error.message
            #expect(words.hasPrefix("WRONGPASS"))
            #expect(!error.description.contains("wrong-Pa55") && !"\(error)".contains(Self.alicePassword))
        }
    }

    /// README's example under "Running a fleet", as written there (its host does not exist here: it runs
    /// to a typed error naming the host, never the password).
    static func readmeFleetExample(password: String) async throws -> RedisTokenStorage {
        // README-FLEET-BEGIN
        let redis = try await RedisConnector.connect(try RedisConfiguration(url: "redis://entitle:\(password)@redis.internal:6379/2"))
        let sharedStorage = RedisTokenStorage(client: redis, keyPrefix: "myapp")
        // README-FLEET-END
        return sharedStorage
    }

    @Test func readmesFleetExampleIsCompiledAndRunHere() async throws {
        let readme = try String(contentsOf: URL(fileURLWithPath: #filePath).appendingPathComponent("../../../README.md").standardized, encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "### Running a fleet").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let lines = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8).components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// README-FLEET-BEGIN") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// README-FLEET-END") })
        expectEqual(lines[(begin + 1)..<end].map { $0.trimmingCharacters(in: .whitespaces) }.joined(separator: "\n"), block)
        do {
            _ = try await Self.readmeFleetExample(password: "n0t-Here")
            Issue.record("redis.internal answered")
        } catch let error as RedisError {
            #expect("\(error)".contains("redis.internal") && !"\(error)".contains("n0t-Here"), "\(error)")
        }
    }

    @Test func aURLSelectsTheDatabaseAndEveryConnectionIsNamed() async throws {
        let server = try await RedisServer(settings: Self.settings)
        defer { Task { await server.stop() } }
        var configuration = try RedisConfiguration(url: "redis://alice:\(Self.alicePassword)@localhost:\(server.port)/3")
        configuration.clientName = "entitle-test"
        expectEqual(configuration.host, "localhost")
        let inThree = RedisClient(configuration)
        defer { inThree.close() }
        _ = try await inThree.send(["SET", "where", "three"])
        try await expectEqual(inThree.send(["GET", "where"]).text, "three")
        try await expectEqual(inThree.send(["CLIENT", "GETNAME"]).text, "entitle-test")
        let inZero = RedisClient(RedisConfiguration(port: server.port, credentials: RedisCredentials(password: Self.password)))
        defer { inZero.close() }
        try await expectEqual(inZero.send(["GET", "where"]), .bulkString(nil), "database 0 holds nothing of database 3")
    }

    @Test func theTokenStoreWorksOnAServerThatAsksForAPassword() async throws {
        let server = try await RedisServer(settings: Self.settings)
        defer { Task { await server.stop() } }
        var configuration = server.configuration()
        configuration.credentials = RedisCredentials(username: "alice", password: Self.alicePassword)
        let client = RedisClient(configuration)
        defer { client.close() }
        let store = RedisTokenStorage(client: client, keyPrefix: "auth-test")
        let heard = AsyncStream<String>.makeStream()
        let observation = store.observeSaves { device, _ in heard.continuation.yield(device) }
        defer { observation.cancel() }
        try await Task.sleep(for: .milliseconds(300))  // the subscriber signs in and subscribes
        let version = try await store.save(
            StoredTokens(selectedProvider: "acme-cable"), deviceID: "device-1", requestorID: "sim-requestor", replacing: .absent)
        let loaded = try await store.load(deviceID: "device-1", requestorID: "sim-requestor")
        #expect(loaded.version == version && loaded.tokens.selectedProvider == "acme-cable")
        var iterator = heard.stream.makeAsyncIterator()
        await expectEqual(iterator.next(), "device-1", "the save notification came through the signed-in subscriber")
    }

    @Test func aHostNameAndIPv6ReachTheServer() async throws {
        let server = try await RedisServer(settings: ["--bind", "127.0.0.1", "::1"])
        defer { Task { await server.stop() } }
        for host in ["localhost", "::1", "127.0.0.1"] {
            let result = await ping(RedisConfiguration(host: host, port: server.port, connectTimeout: .seconds(2)))
            expectEqual((try? result.get()), .simpleString("PONG"), "\(host): \(result)")
        }
    }

    @Test func anUnknownHostIsATypedErrorWithinTheConnectTimeout() async {
        let started = ContinuousClock.now
        let result = await ping(RedisConfiguration(host: "no-such-host.invalid", port: 6379, connectTimeout: .seconds(1)))
        guard case .failure(let error) = result, error.code == .connect else {
            Issue.record("an unknown host must fail to connect: \(result)")
            return
        }
        let why = error.message
        #expect(why.contains("no-such-host.invalid"))
        #expect(ContinuousClock.now - started < .seconds(15), "the 1 s connect deadline, not a hang")
    }
}

@Suite("Redis layout: one slot per device, and the move from the 0.3 layout", RedisServer.trait)
struct RedisLayoutTests {
    @Test func everyKeyASaveTouchesIsInTheDevicesSlot() {
        let store = RedisTokenStorage(client: RedisClient(RedisConfiguration(connections: 1)), keyPrefix: "fleet")
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let device = String((0..<Int.random(in: 1...40, using: &random)).map { _ in "abcXYZ019-_{}:é".randomElement(using: &random)! })
            let requestor = ["sim-requestor", "other", "{x}", ""].randomElement(using: &random)!
            let keys = [store.tokensKey(deviceID: device, requestorID: requestor), store.deviceKey(deviceID: device), store.versionsKey(deviceID: device)]
            expectEqual(Set(keys.map(RedisKeySlot.of)).count, 1, "CROSSSLOT for device \(device)")
        }
        store.client.close()
    }

    /// Writes `tokens` as the 0.3 layout did (legacy keys, the global counter).
    private func writeLegacy(_ client: RedisClient, device: String, requestor: String, tokens: StoredTokens, version: UInt64) async throws {
        let json = String(decoding: try JSONEncoder().encode(tokens), as: UTF8.self)
        let key = "entitle:tokens:" + RedisTokenStorage.pairHash(deviceID: device, requestorID: requestor)
        _ = try await client.send(["HSET", key, "v", String(version), "t", json])
        _ = try await client.send(["PEXPIRE", key, "600000"])
        _ = try await client.send(["SADD", "entitle:device:" + RedisTokenStorage.deviceHash(device), requestor])
        _ = try await client.send(["SET", "entitle:versions", String(version)])
    }

    @Test func aStoreWrittenByTheOldLayoutIsMovedWithItsVersionsAndExpiry() async throws {
        let server = try await RedisServer()
        defer { Task { await server.stop() } }
        let client = RedisClient(server.configuration())
        defer { client.close() }
        let store = RedisTokenStorage(client: client)
        let alice = StoredTokens(selectedProvider: "acme-cable", deviceID: "tv-1")
        try await writeLegacy(client, device: "tv-1", requestor: "sim-requestor", tokens: alice, version: 9_000_000_000_000_001)
        try await writeLegacy(client, device: "tv-1", requestor: "other", tokens: alice, version: 9_000_000_000_000_002)
        try await writeLegacy(client, device: "tv-2", requestor: "sim-requestor", tokens: StoredTokens(selectedProvider: "x"), version: 9_000_000_000_000_003)
        // A node on the new layout saved tv-3 before the move: its data wins.
        try await writeLegacy(client, device: "tv-3", requestor: "sim-requestor", tokens: StoredTokens(selectedProvider: "old", deviceID: "tv-3"), version: 9_000_000_000_000_004)
        let newer = try await store.save(StoredTokens(selectedProvider: "new", deviceID: "tv-3"), deviceID: "tv-3", requestorID: "sim-requestor", replacing: .absent)

        let report = try await store.migrateLegacyKeys()
        expectEqual(report, RedisLegacyMigration(moved: 2, superseded: 1, dropped: 1), "tv-2's tokens name no device")
        let moved = try await store.load(deviceID: "tv-1", requestorID: "sim-requestor")
        #expect(moved.version == StorageVersion(9_000_000_000_000_001) && moved.tokens == alice)
        try await expectEqual(store.load(deviceID: "tv-1", requestorID: "other").version, StorageVersion(9_000_000_000_000_002))
        try await expectEqual(store.load(deviceID: "tv-3", requestorID: "sim-requestor").tokens.selectedProvider, "new")
        try await expectEqual(store.load(deviceID: "tv-3", requestorID: "sim-requestor").version, newer)
        guard case .integer(let ttl) = try await client.send(["PTTL", store.tokensKey(deviceID: "tv-1", requestorID: "sim-requestor")]) else {
            Issue.record("no TTL")
            return
        }
        // The legacy key's 10-minute expiry came along (less the time the test took on a busy machine),
        // rather than none or the 30 days a fresh save of nothing that expires gets.
        #expect((300_000...600_000).contains(ttl), "the expiry moved with the key: \(ttl) ms")
        // A save after the move gets a version above every old one; nothing of the old layout is left.
        let next = try await store.save(alice, deviceID: "tv-1", requestorID: "sim-requestor", replacing: moved.version)
        #expect(next.number > 9_000_000_000_000_004)
        guard case .array(let left?) = try await client.send(["KEYS", "entitle:tokens:*"]), case .array(let sets?) = try await client.send(["KEYS", "entitle:device:*"])
        else { Issue.record("no KEYS answer"); return }
        #expect(left.isEmpty && sets.isEmpty)
        try await expectEqual(store.migrateLegacyKeys(), RedisLegacyMigration(), "a second run finds nothing")
    }
}
