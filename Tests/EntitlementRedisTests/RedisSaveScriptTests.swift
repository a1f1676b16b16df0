import EntitlementEngine
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

/// The save script on a real redis-server: loaded once and sent whole only where the server forgot it;
/// and total: whatever the tokens' expiry (any `Int64`, as read
/// from the wire), a save happens whole; an argument or a key the store never sends is refused with an
/// error and nothing written — never a write followed by a failure (a new version stored while the
/// engine is told the save failed).
@Suite("Redis save script: loaded once, whole or nothing", RedisServer.trait)
struct RedisSaveScriptTests {
    /// How many times the server ran `SCRIPT LOAD` and `EVAL` (its command statistics).
    private func calls(_ client: RedisClient) async throws -> (load: Int, eval: Int) {
        let info = try await client.send(["INFO", "commandstats"]).text ?? ""
        func count(_ name: String) -> Int {
            guard let line = info.split(whereSeparator: \.isNewline).first(where: { $0.hasPrefix("cmdstat_\(name):") }),
                let field = line.split(separator: ",").first(where: { $0.contains("calls=") })
            else { return 0 }
            return Int(field.split(separator: "=").last ?? "") ?? 0
        }
        return (count("script|load"), count("eval"))
    }

    @Test func theScriptIsLoadedOnceAndSentWholeWhereTheServerForgetsIt() async throws {
        let server = try await RedisServer()
        defer { Task { await server.stop() } }
        let client = RedisClient(server.configuration())
        defer { client.close() }
        let store = RedisTokenStorage(client: client, keyPrefix: "script-test")
        var version = StorageVersion.absent
        for round in 0..<10 {
            version = try await store.save(
                StoredTokens(selectedProvider: "p\(round)"), deviceID: "device-1", requestorID: "sim-requestor", replacing: version)
        }
        #expect(try await calls(client) == (load: 1, eval: 0), "ten saves, the script sent once")
        _ = try await client.send(["SCRIPT", "FLUSH"])
        version = try await store.save(StoredTokens(selectedProvider: "after"), deviceID: "device-1", requestorID: "sim-requestor", replacing: version)
        try await expectEqual(store.load(deviceID: "device-1", requestorID: "sim-requestor").tokens.selectedProvider, "after")
        #expect(try await calls(client) == (load: 1, eval: 1), "NOSCRIPT: sent whole once (EVAL teaches it), and the save went through")
        version = try await store.save(StoredTokens(selectedProvider: "later"), deviceID: "device-1", requestorID: "sim-requestor", replacing: version)
        #expect(try await calls(client) == (load: 1, eval: 1), "known again: by digest")
    }

    @Test func aSaveOfAnyExpiryHappensWhole() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let now = Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let store = RedisTokenStorage(client: client, now: { now })
        let edges: [Int64] = [
            .min, .min + 1, -1, 0, 1, now.milliseconds, now.milliseconds + 60_001, (1 << 53) - 1, 1 << 53, (1 << 53) + 1,
            Int64.max / 2 - 1, Int64.max / 2, Int64.max / 2 + 1, Int64.max - now.milliseconds, Int64.max - 1, .max,
        ]
        var random = SplitMix64(seed: 42)
        let expiries = edges + (0..<200).map { _ in Int64.random(in: .min ... .max, using: &random) }
        var version = StorageVersion.absent
        for expiry in expiries {
            let token = AuthenticationToken(mvpdID: "m", requestorID: "r", userID: "u", expires: Timestamp(milliseconds: expiry))
            let tokens = StoredTokens(authentication: token, deviceID: "d")
            let saved = try await store.save(tokens, deviceID: "d", requestorID: "r", replacing: version)
            #expect(saved > version, "expiry \(expiry)")
            version = saved
            try await expectEqual(store.load(deviceID: "d", requestorID: "r"), VersionedTokens(tokens, version: saved), "expiry \(expiry)")
            for key in [store.tokensKey(deviceID: "d", requestorID: "r"), store.deviceKey(deviceID: "d")] {
                guard case .integer(let left) = try await client.send(["PTTL", key]) else {
                    Issue.record("no TTL on \(key) for expiry \(expiry)")
                    continue
                }
                #expect((1...RedisTokenStorage.longestLifetime).contains(left), "expiry \(expiry): \(key) lives \(left) ms")
            }
        }
        client.close()
        await server.stop()
    }

    @Test func argumentsTheStoreNeverSendsAreRefusedWithNothingWritten() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        let store = RedisTokenStorage(client: client)
        let prefix = store.devicePrefix("d")
        let keys = [
            RedisTokenStorage.tokensKey(prefix, deviceID: "d", requestorID: "r"), RedisTokenStorage.deviceKey(prefix),
            RedisTokenStorage.versionsKey(prefix),
        ]
        // The script's answer as it came (an error reply is a value here, not a thrown error).
        func save(life: String, announcement: String = "PUBLISH", replacing expected: String = "0") async throws -> RESPValue {
            try await client.pipeline(
                [["EVAL", RedisTokenStorage.saveScript, "3"] + keys + [expected, "{}", life, "r", "saves", announcement, "1"]])[0]
        }
        let lifetimes = [
            "0", "-1", "1.5", "1e3", "0x10", " 1", "1 ", "", "abc", "9007199254740992", "4611686018427387903",
            "9223372036854775807", "18446744073709551616", String(repeating: "9", count: 400),
        ]
        for life in lifetimes {
            let answer = try await save(life: life)
            guard case .error(let message) = answer else {
                Issue.record("lifetime \(life.prefix(30)) was taken: \(answer)")
                continue
            }
            #expect(message.contains("lifetime"), "\(message)")
            try await expectEqual(Self.keys(client), [], "lifetime \(life.prefix(30)) wrote something")
        }
        guard case .error = try await save(life: "60000", announcement: "DEL") else {
            Issue.record("an announcement other than PUBLISH or SPUBLISH was taken")
            return
        }
        try await expectEqual(Self.keys(client), [])
        // A key of the save holding another kind of value: refused before any write.
        _ = try await client.send(["SET", keys[1], "not a set"])
        guard case .error(let wrongType) = try await save(life: "60000") else {
            Issue.record("a device key of another type was taken")
            return
        }
        #expect(wrongType.hasPrefix("WRONGTYPE"), "\(wrongType)")
        try await expectEqual(Self.keys(client), [keys[1]])
        _ = try await client.send(["DEL", keys[1]])
        // A version counter past what the script's numbers hold: refused, nothing written.
        _ = try await client.send(["SET", keys[2], "9007199254740991"])
        guard case .error = try await save(life: "60000") else {
            Issue.record("a counter at 2^53 - 1 was taken")
            return
        }
        try await expectEqual(Self.keys(client), [keys[2]])
        _ = try await client.send(["DEL", keys[2]])
        // The longest lifetime is taken, and a device set kept longer than it (by an older save) still
        // lets a save happen whole.
        guard case .array = try await save(life: "9007199254740991") else {
            Issue.record("the longest lifetime was refused")
            return
        }
        _ = try await client.send(["PEXPIRE", keys[1], "4611686018427387903"])
        let current = try await client.send(["HGET", keys[0], "v"]).text ?? ""
        guard case .array(let answer?) = try await save(life: "60000", replacing: current), answer.first == .integer(1) else {
            Issue.record("a save over a device set kept past 2^53 ms did not happen")
            return
        }
        guard case .integer(let counterLeft) = try await client.send(["PTTL", keys[2]]) else {
            Issue.record("the counter has no TTL")
            return
        }
        #expect((1...RedisTokenStorage.longestLifetime).contains(counterLeft), "the counter lives \(counterLeft) ms")
        client.close()
        await server.stop()
    }

    /// Every key on the server, sorted.
    static func keys(_ client: RedisClient) async throws -> [String] {
        guard case .array(let keys?) = try await client.send(["KEYS", "*"]) else { return [] }
        return keys.compactMap(\.text).sorted()
    }
}
