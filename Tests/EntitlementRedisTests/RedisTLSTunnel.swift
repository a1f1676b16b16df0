import EntitlementSimulator
import EntitlementSupport
import Foundation

@testable import EntitlementRedis

/// The TLS recipe the documentation gives, run for real: a certificate authority and a server
/// certificate for `localhost`/127.0.0.1 made with `openssl`, a `redis-server` serving TLS on a port of
/// its own (`--tls-port`), and Debian's `stunnel4` in client mode accepting plain connections on a
/// loopback port and carrying them over TLS to that port, checking the server's certificate.
final class RedisTLSTunnel: @unchecked Sendable {
    static let stunnel = "/usr/bin/stunnel4"
    static let openssl = "/usr/bin/openssl"
    static var installed: Bool {
        RedisServer.installed && FileManager.default.isExecutableFile(atPath: stunnel) && FileManager.default.isExecutableFile(atPath: openssl)
    }

    /// The server (its plain `port` stays open for the test's own checks).
    let server: RedisServer
    /// The server's TLS port.
    let tlsPort: UInt16
    /// Where the tunnel accepts plain connections.
    let port: UInt16
    private let tunnel: ChildProcess
    private let folder: String

    /// Starts the server and a tunnel to it; `trusting` the server's own authority, or a stranger's
    /// (then the tunnel refuses the server's certificate).
    init(password: String, trustingTheServer: Bool = true) async throws {
        folder = ScratchSpace.path("entitle-tls-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let folder = folder
        try await RedisServer.onThread { Result { try Self.makeCertificates(in: folder) } }.get()
        tlsPort = try RedisServer.freePort()
        server = try await RedisServer(settings: [
            "--requirepass", password, "--tls-port", String(tlsPort), "--tls-cert-file", "\(folder)/redis.crt",
            "--tls-key-file", "\(folder)/redis.key", "--tls-ca-cert-file", "\(folder)/ca.crt", "--tls-auth-clients", "no",
        ])
        port = try RedisServer.freePort()
        let configuration = """
            foreground = yes
            pid =
            debug = warning
            [redis]
            client = yes
            accept = 127.0.0.1:\(port)
            connect = 127.0.0.1:\(tlsPort)
            verifyChain = yes
            CAfile = \(folder)/\(trustingTheServer ? "ca.crt" : "stranger.crt")
            checkHost = localhost
            """
        try configuration.write(toFile: "\(folder)/stunnel.conf", atomically: true, encoding: .utf8)
        do {
            tunnel = try ChildProcess.spawn(Self.stunnel, ["\(folder)/stunnel.conf"])
        } catch {
            await server.stop()
            throw error
        }
        let port = port
        let listening = await RedisServer.onThread { () -> Bool in
            for _ in 0..<100 {
                if (try? RedisConnection.open(RedisConfiguration(port: port, connectTimeout: .milliseconds(200)))) != nil { return true }
                usleep(50_000)
            }
            return false
        }
        guard listening else {
            await stop()
            throw RedisError.connect("stunnel did not start")
        }
    }

    func stop() async {
        await RedisServer.kill(tunnel)
        await server.stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    deinit { tunnel.send(SIGKILL) }

    /// `ca.crt`/`ca.key` (the authority), `redis.crt`/`redis.key` (signed by it, for localhost and
    /// 127.0.0.1), and `stranger.crt` (an authority that signed nothing here).
    private static func makeCertificates(in folder: String) throws {
        try "subjectAltName=DNS:localhost,IP:127.0.0.1\n".write(toFile: "\(folder)/san.cnf", atomically: true, encoding: .utf8)
        let curve = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
        for arguments in [
            ["req", "-x509"] + curve + ["-days", "2", "-subj", "/CN=entitle test CA", "-keyout", "ca.key", "-out", "ca.crt"],
            ["req", "-x509"] + curve + ["-days", "2", "-subj", "/CN=a stranger", "-keyout", "stranger.key", "-out", "stranger.crt"],
            ["req"] + curve + ["-subj", "/CN=localhost", "-keyout", "redis.key", "-out", "redis.csr"],
            [
                "x509", "-req", "-in", "redis.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
                "-extfile", "san.cnf", "-out", "redis.crt",
            ],
        ] {
            let step = try ChildProcess.spawn(openssl, arguments, directory: folder)
            guard step.waitForExit() == .exited(0) else { throw RedisError.connect("openssl \(arguments[0]) failed") }
        }
    }
}
