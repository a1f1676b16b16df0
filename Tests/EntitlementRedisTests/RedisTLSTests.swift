import EntitlementEngine
import Foundation
import Testing

@testable import EntitlementRedis

/// `rediss://` users run a local TLS tunnel; this is the documented recipe, tested: the store speaks
/// `redis://` to stunnel, which speaks TLS to the server and checks its certificate.
@Suite(
    "Redis over TLS through stunnel", .serialized,
    .enabled(if: RedisTLSTunnel.installed || RedisServer.required, "needs redis-server, stunnel4 and openssl (.ci/run installs them)"))
struct RedisTLSTests {
    static let password = "tl5-Pa55"

    @Test func theStoreReachesATLSServerThroughTheTunnel() async throws {
        let tunnel = try await RedisTLSTunnel(password: Self.password)
        let client = RedisClient(try RedisConfiguration(url: "redis://:\(Self.password)@127.0.0.1:\(tunnel.port)"))
        defer {
            client.close()
            Task { await tunnel.stop() }
        }
        let store = RedisTokenStorage(client: client)
        let version = try await store.save(StoredTokens(selectedProvider: "acme-cable", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        let loaded = try await store.load(deviceID: "d", requestorID: "r")
        #expect(loaded.version == version && loaded.tokens.selectedProvider == "acme-cable")
        // The server took the connection on its TLS port.
        let info = try await client.send(["CLIENT", "INFO"]).text ?? ""
        #expect(info.contains("laddr=127.0.0.1:\(tunnel.tlsPort) "), "\(info)")
        // Plain Redis to the TLS port gets nowhere: a typed error within the timeouts, no hang.
        let plain = RedisClient(RedisConfiguration(
            port: tunnel.tlsPort, credentials: RedisCredentials(password: Self.password), connectTimeout: .seconds(1),
            commandTimeout: .seconds(1), connections: 1))
        defer { plain.close() }
        await #expect(throws: RedisError.self) { try await plain.send(["PING"]) }
    }

    @Test func aTunnelThatDoesNotTrustTheServersCertificateCarriesNothing() async throws {
        let tunnel = try await RedisTLSTunnel(password: Self.password, trustingTheServer: false)
        let client = RedisClient(RedisConfiguration(
            port: tunnel.port, credentials: RedisCredentials(password: Self.password), connectTimeout: .seconds(2),
            commandTimeout: .seconds(2), connections: 1))
        defer {
            client.close()
            Task { await tunnel.stop() }
        }
        let started = ContinuousClock.now
        let store = RedisTokenStorage(client: client)
        await #expect(throws: TokenStorageError.self) { try await store.load(deviceID: "d", requestorID: "r") }
        #expect(ContinuousClock.now - started < .seconds(20), "the 2 s deadlines, not a hang")
    }
}
