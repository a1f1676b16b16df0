import EntitlementSupport
import EntitlementRedis
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Redis a fleet shares, and the faults the harness makes it go through.
protocol FleetRedis: Sendable {
    /// The port nodes are given (the server's, or a cluster's seed node's).
    var port: UInt16 { get }
    /// Whether it is a Redis Cluster (nodes then use `RedisClusterClient`).
    var isCluster: Bool { get }
    /// What it is, for the run's first line.
    var summary: String { get }
    /// Hangs (SIGSTOP) the server — on a cluster, one master, long enough for its replica to take over.
    func hang(for duration: Duration) async
    /// Restarts the server — on a cluster, SIGKILLs one master and starts it again (it rejoins as a replica).
    func restart(keepingData: Bool) async
    /// Lets every stopped process go on.
    func resume()
    func stop() async
}

extension RedisProcess: FleetRedis {
    var isCluster: Bool { false }
    var summary: String { "redis-server on \(port)" }
}

/// A six-node Redis Cluster (three masters, three replicas, a 2 s node timeout) on loopback.
final class RedisClusterProcess: FleetRedis {
    let ports: [UInt16]
    private let folder: String
    private let processes: Mutex<[UInt16: ChildProcess]>
    private let random = Mutex(SystemRandomNumberGenerator())

    var port: UInt16 { ports[0] }
    var isCluster: Bool { true }
    var summary: String { "a Redis Cluster of 6 nodes (seed \(port))" }

    private init(ports: [UInt16], folder: String, processes: [UInt16: ChildProcess]) {
        self.ports = ports
        self.folder = folder
        self.processes = Mutex(processes)
    }

    /// Starts six nodes and forms them. A port found free can still be taken before its node binds it
    /// (another server on the machine): that node never answers, and the cluster is started again on
    /// other ports, three times at most.
    static func start(folder: String) async throws(FleetError) -> RedisClusterProcess {
        for _ in 0..<3 {
            var ports: [UInt16] = []
            var processes: [UInt16: ChildProcess] = [:]
            for _ in 0..<6 {
                guard let port = ClusterNodePort.free(avoiding: ports) else { throw FleetError("no free port pair for a cluster node") }
                ports.append(port)
                processes[port] = try launch(port: port, folder: folder)
            }
            let cluster = RedisClusterProcess(ports: ports, folder: folder, processes: processes)
            if await form(ports) { return cluster }
            await cluster.stop()
        }
        throw FleetError("the Redis Cluster did not form (are redis-server and redis-cli installed?)")
    }

    /// Forms the cluster (`redis-cli --cluster create`, a replica per master) and waits until it serves.
    private static func form(_ ports: [UInt16]) async -> Bool {
        for port in ports where !(await RedisProcess.answers(port: port)) { return false }
        guard let create = try? ChildProcess.start(
            "redis-cli", ["--cluster", "create"] + ports.map { "127.0.0.1:\($0)" } + ["--cluster-replicas", "1", "--cluster-yes"]),
            await create.waitForExit(upTo: .seconds(30))
        else { return false }
        let client = RedisClient(RedisConfiguration(port: ports[0], connections: 1))
        defer { client.close() }
        for _ in 0..<150 {
            if let info = try? await client.send(["CLUSTER", "INFO"]).text, info.contains("cluster_state:ok") { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }

    private static func launch(port: UInt16, folder: String) throws(FleetError) -> ChildProcess {
        try ChildProcess.start(
            "redis-server",
            [
                "--port", "\(port)", "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", folder, "--loglevel", "warning",
                // Each node its own data file: a replica's full sync writes one, and a node started again
                // must never load another node's keys.
                "--dbfilename", "dump-\(port).rdb",
                "--logfile", "\(folder)/redis-\(port).log", "--cluster-enabled", "yes", "--cluster-config-file", "\(folder)/nodes-\(port).conf",
                "--cluster-node-timeout", "2000", "--repl-diskless-sync-delay", "0",
            ])
    }

    /// The ports of the masters serving slots now (from any node that answers).
    private func masters() async -> [UInt16] {
        for port in ports {
            let client = RedisClient(RedisConfiguration(port: port, connectTimeout: .milliseconds(300), commandTimeout: .seconds(1), connections: 1))
            defer { client.close() }
            guard let text = try? await client.send(["CLUSTER", "NODES"]).text else { continue }
            return text.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: " ")
                guard fields.count > 8, fields[2].contains("master"), !fields[2].contains("fail") else { return nil }
                return fields[1].split(separator: "@").first?.split(separator: ":").last.flatMap { UInt16($0) }
            }
        }
        return []
    }

    private func anyMaster() async -> UInt16? {
        let masters = await masters()
        return random.withLock { masters.randomElement(using: &$0) }
    }

    func hang(for duration: Duration) async {
        guard let port = await anyMaster(), let process = processes.withLock({ $0[port] }) else { return }
        process.send(SIGSTOP)
        try? await Task.sleep(for: duration)
        process.send(SIGCONT)
    }

    func restart(keepingData: Bool) async {
        guard let port = await anyMaster(), let old = processes.withLock({ $0[port] }) else { return }
        await old.killAndReap()
        if !keepingData { try? FileManager.default.removeItem(atPath: "\(folder)/dump-\(port).rdb") }
        try? await Task.sleep(for: .seconds(3))  // past the node timeout: its replica takes over
        if let fresh = try? Self.launch(port: port, folder: folder) { processes.withLock { $0[port] = fresh } }
    }

    func resume() {
        for process in processes.withLock({ Array($0.values) }) { process.send(SIGCONT) }
    }

    func stop() async {
        for process in processes.withLock({ Array($0.values) }) { await process.killAndReap() }
    }
}
