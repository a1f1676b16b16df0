import EntitlementCommandLine
import EntitlementSupport
import EntitlementHTTPServer
import EntitlementRedis
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A `redis-server` child process on a free port, with its data folder and its log (`redis.log`).
final class RedisProcess: Sendable {
    let port: UInt16
    private let folder: String
    private let process: Mutex<ChildProcess>

    private init(port: UInt16, folder: String, process: ChildProcess) {
        self.port = port
        self.folder = folder
        self.process = Mutex(process)
    }

    static func start(folder: String) async throws(FleetError) -> RedisProcess {
        let port = try freePort()
        let redis = RedisProcess(port: port, folder: folder, process: try launch(port: port, folder: folder))
        guard await redis.answers() else { throw FleetError("redis-server did not start (is it installed? see \(folder)/redis.log)") }
        return redis
    }

    private static func launch(port: UInt16, folder: String) throws(FleetError) -> ChildProcess {
        try ChildProcess.start(
            "redis-server",
            [
                "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder,
                "--dbfilename", "fleet.rdb", "--loglevel", "warning", "--logfile", "\(folder)/redis.log",
            ])
    }

    /// Whether the server answers PING within about five seconds.
    func answers() async -> Bool { await Self.answers(port: port) }

    /// Whether a server on `port` answers PING within about five seconds.
    static func answers(port: UInt16) async -> Bool {
        let client = RedisClient(RedisConfiguration(port: port, connectTimeout: .milliseconds(200), commandTimeout: .milliseconds(500), connections: 1))
        defer { client.close() }
        for _ in 0..<50 {
            if case .simpleString("PONG")? = try? await client.send(["PING"]) { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return false
    }

    /// Stops the server (SIGSTOP) for `duration`, then lets it go on.
    func hang(for duration: Duration) async {
        let server = process.withLock { $0 }
        server.send(SIGSTOP)
        try? await Task.sleep(for: duration)
        server.send(SIGCONT)
    }

    func resume() { process.withLock { $0 }.send(SIGCONT) }

    /// Stops the server — when `keepingData` a graceful restart (`SHUTDOWN SAVE`: every write it
    /// acknowledged is in the file it exits with), else killed with its data file removed — waits
    /// until it is gone, and starts it again on the same port until it answers (five tries).
    ///
    /// Not SAVE then SIGKILL: writes acknowledged between the two would be lost, which no store
    /// that keeps its data does and which the `TokenStorage` contract (a save that answered holds)
    /// rules out.
    func restart(keepingData: Bool) async {
        let server = process.withLock { $0 }
        if keepingData {
            let client = RedisClient(RedisConfiguration(port: port, commandTimeout: .seconds(5), connections: 1))
            _ = try? await client.send(["SHUTDOWN", "SAVE"])  // no answer: the server closes the connection as it exits
            client.close()
            _ = await server.waitForExit(upTo: .seconds(10))
        } else {
            try? FileManager.default.removeItem(atPath: folder + "/fleet.rdb")
        }
        await server.killAndReap()
        for _ in 0..<5 {
            if let fresh = try? Self.launch(port: port, folder: folder) {
                process.withLock { $0 = fresh }
                if await answers() { return }
                await fresh.killAndReap()
            }
            StandardError.write("entitle fleet: redis-server did not come back on \(port); trying again (see \(folder)/redis.log)\n")
        }
    }

    func stop() async { await process.withLock { $0 }.killAndReap() }
}

/// One `entitle fleet-node` child process.
final class NodeProcess: Sendable {
    let port: UInt16
    let url: String
    private let process: ChildProcess
    /// Where the node's standard error goes (a crash report lands there).
    let errors: String
    /// Whether the harness killed it (a fault of the plan), not the node itself.
    private let killedByHarness = Atomic<Bool>(false)

    private init(port: UInt16, process: ChildProcess, errors: String) {
        self.port = port
        self.url = "http://127.0.0.1:\(port)"
        self.process = process
        self.errors = errors
    }

    /// How the node ended when nothing of the harness ended it — a crash — or nil while it runs or
    /// when the harness killed it.
    var endedOnItsOwn: ChildProcess.Termination? {
        killedByHarness.load(ordering: .relaxed) ? nil : process.termination
    }

    static func start(number: Int, redis: any FleetRedis, adobe: String, folder: String, port: UInt16? = nil) async throws(FleetError) -> NodeProcess {
        let port = if let port { port } else { try freePort() }
        let program = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let errors = "\(folder)/node-\(number).err"
        let process = try ChildProcess.start(
            program,
            ["fleet-node", "--redis-port", "\(redis.port)", "--adobe", adobe, "--port", "\(port)", "--log", "\(folder)/node-\(number).log"]
                + (redis.isCluster ? ["--cluster"] : []),
            errors: errors)
        let node = NodeProcess(port: port, process: process, errors: errors)
        for _ in 0..<100 {
            if case .answered(200, _) = await FleetHTTPClient.post(port: port, path: "/health", body: [], timeout: 2) { return node }
            try? await Task.sleep(for: .milliseconds(100))
        }
        await process.killAndReap()
        throw FleetError("node \(number) did not start (see \(folder)/node-\(number).err)")
    }

    /// SIGKILL: the node dies at once, its sessions' calls unanswered.
    func kill() async {
        killedByHarness.store(true, ordering: .relaxed)
        await process.killAndReap()
    }

    /// SIGTERM: the node answers its sessions' calls and exits; true when it did within `limit`.
    func terminate(upTo limit: Duration) async -> Bool {
        process.send(SIGTERM)
        return await process.waitForExit(upTo: limit)
    }
}

struct FleetError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A port nobody uses now, below Linux's range of ephemeral ports (32768 and up), so that no
/// outgoing connection takes it while a server restarts on it.
func freePort() throws(FleetError) -> UInt16 {
    for _ in 0..<200 {
        let port = UInt16.random(in: 20_000..<30_000)
        if let listener = try? HTTPListener(port: port) { return listener.port }
    }
    throw FleetError("no free port between 20000 and 30000")
}
