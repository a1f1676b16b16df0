#if canImport(Glibc)
import Glibc
#endif
import EntitlementSimulator
import EntitlementSupport
import Foundation
import Testing

@testable import EntitlementRedis

/// A real `redis-server` (Debian's package; `.ci/run` installs it and sets `ENTITLE_REQUIRE_REDIS=1`,
/// so there a missing server fails the tests instead of skipping them) on a free loopback port,
/// without persistence; a test ends with `await server.stop()`.
final class RedisServer: @unchecked Sendable {
    static let path = "/usr/bin/redis-server"
    static var installed: Bool { FileManager.default.isExecutableFile(atPath: path) }
    static var required: Bool { ProcessInfo.processInfo.environment["ENTITLE_REQUIRE_REDIS"] == "1" }
    static let trait = Testing.ConditionTrait.enabled(
        if: installed || required, "needs redis-server (.ci/run installs Debian's package)")

    let port: UInt16
    private let process: ChildProcess

    /// Starts a server and waits until it answers PING (at most 10 s). Process handling runs on a
    /// thread of its own: blocking calls never run on Swift concurrency's threads. `settings` are more
    /// of the server's configuration directives (`--requirepass`, `--user`, `--bind`: a later one wins).
    init(settings: [String] = []) async throws {
        // A port free a moment ago may be taken by another test's server before this one binds it:
        // then this server exits at once (and PING may reach the other): try another port.
        var started: (ChildProcess, UInt16)?
        for _ in 0..<5 where started == nil {
            let port = try Self.freePort()
            let candidate = try? ChildProcess.spawn(Self.path, Self.arguments(port) + settings)
            guard let candidate else { continue }
            let running = await Self.onThread { () -> Bool in
                guard Self.answersPing(port) else { return false }
                usleep(100_000)
                return candidate.isRunning
            }
            if running { started = (candidate, port) } else { await Self.kill(candidate) }
        }
        guard let (process, port) = started else { throw RedisError.connect("redis-server did not start") }
        self.process = process
        self.port = port
    }

    /// Each server works in a folder of its own: a replica's full sync writes an RDB file there, which a
    /// server started later in the same folder would load.
    static func arguments(_ port: UInt16) -> [String] {
        let folder = ScratchSpace.path("entitle-redis-\(port)-")
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        return [
            "--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--daemonize", "no", "--loglevel", "warning",
            "--dir", folder,
        ]
    }

    /// Whether a server on `port` answers PING within 10 s (blocking: call it on a thread of its own).
    static func answersPing(_ port: UInt16) -> Bool {
        for _ in 0..<100 {
            if let connection = try? RedisConnection.open(RedisConfiguration(port: port, connectTimeout: .milliseconds(200))),
                let answer = try? connection.roundTrip(RESPValue.command(["PING"]), answers: 1, until: .now.advanced(by: .seconds(1))),
                answer == [.simpleString("PONG")] || answer.first?.isAuthenticationDemand == true
            {
                return true
            }
            usleep(100_000)
        }
        return false
    }

    /// Runs blocking `work` on a thread of its own.
    static func onThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { done in Thread { done.resume(returning: work()) }.start() }
    }

    /// A client configuration for this server.
    func configuration(connectTimeout: Duration = .seconds(2), commandTimeout: Duration = .seconds(5), connections: Int = 2)
        -> RedisConfiguration
    {
        RedisConfiguration(port: port, connectTimeout: connectTimeout, commandTimeout: commandTimeout, connections: connections)
    }

    /// Stops the server and waits for it to exit (SIGKILL: without persistence there is nothing to save).
    func stop() async { await Self.kill(process) }

    /// Stops (`SIGSTOP`) or continues (`SIGCONT`) the server's process: a replica that lags, for a moment.
    func suspend(_ stopped: Bool) { process.send(stopped ? SIGSTOP : SIGCONT) }

    /// Kills `process` and waits for it.
    static func kill(_ process: ChildProcess) async { await process.killAndReap() }

    /// Starts a server on `port` again (after ``stop()``), as a restart would; it answers PING when this returns.
    static func restart(on port: UInt16) async throws -> ChildProcess {
        let again = try ChildProcess.spawn(path, arguments(port))
        let ready = await onThread { answersPing(port) }
        guard ready else { throw RedisError.connect("redis-server did not start again") }
        return again
    }

    /// A server a test forgot to stop is at least told to stop (without waiting).
    deinit { process.send(SIGKILL) }

    /// A loopback port held bound, not listening, while `fd` stays open: connecting to it is refused
    /// (until the caller listens on `fd`), and no other test can take it. Close `fd` when done.
    static func refusingPort() throws -> (fd: Int32, port: UInt16) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw RedisError.connect("no free port")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// A port nothing listens on right now (for a server about to start on it).
    static func freePort() throws -> UInt16 {
        let (fd, port) = try refusingPort()
        close(fd)
        return port
    }
}

extension RESPValue {
    /// `-NOAUTH …`: a server with a password, up and asking for it.
    var isAuthenticationDemand: Bool {
        if case .error(let message) = self { return message.hasPrefix("NOAUTH") }
        return false
    }
}
