import EntitlementSimulator
import EntitlementSupport
import Foundation

@testable import EntitlementRedis

/// A real Redis Cluster on loopback: six `redis-server --cluster-enabled yes` (three masters, three
/// replicas, a password) formed by `redis-cli --cluster create`; a test ends with `await cluster.stop()`.
/// A test that kills a master asks for a 1 s node timeout, so its failover takes seconds; any other gets
/// 15 s, so a node a loaded machine leaves unscheduled for a second is not failed over under it.
final class RedisClusterServers: @unchecked Sendable {
    static let password = "clu5ter-Pa55"
    static var toolsInstalled: Bool { FileManager.default.isExecutableFile(atPath: "/usr/bin/redis-cli") && RedisServer.installed }

    let ports: [UInt16]
    private let processes: [ChildProcess]
    private let folder: String

    /// Forms a cluster whose nodes count one silent for `nodeTimeout` as failing.
    init(nodeTimeout: Duration = .seconds(15)) async throws {
        folder = ScratchSpace.path("entitle-cluster-")
        (ports, processes) = try await Self.form(in: folder, nodeTimeout: nodeTimeout)
        guard await waitUntil({ await self.isHealthy() }, seconds: 30) else {
            await stop()
            throw RedisError.connect("the cluster did not become healthy")
        }
    }

    /// Starts six nodes on fresh ports and forms them into a cluster. A port checked free can still be
    /// taken before its node binds it (by another test's server): such a node never answers, and the
    /// whole cluster is started again on other ports, three times at most.
    private static func form(in folder: String, nodeTimeout: Duration) async throws -> ([UInt16], [ChildProcess]) {
        for _ in 0..<3 {
            try? FileManager.default.removeItem(atPath: folder)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            var ports: [UInt16] = []
            var processes: [ChildProcess] = []
            for number in 0..<6 {
                guard let port = ClusterNodePort.free(avoiding: ports) else { throw RedisError.connect("no free port pair") }
                let process = try ChildProcess.spawn(
                    RedisServer.path,
                    RedisServer.arguments(port) + [
                        "--cluster-enabled", "yes", "--cluster-config-file", "\(folder)/nodes-\(number).conf",
                        "--cluster-node-timeout", String(nodeTimeout.milliseconds), "--dir", folder, "--requirepass", password,
                        "--masterauth", password, "--repl-diskless-sync-delay", "0",
                    ])
                ports.append(port)
                processes.append(process)
            }
            let formed = await RedisServer.onThread { [ports, folder] () -> Bool in
                guard ports.allSatisfy(RedisServer.answersPing) else { return false }
                let create = try? ChildProcess.spawn(
                    "/usr/bin/redis-cli",
                    ["-a", password, "--no-auth-warning", "--cluster", "create"] + ports.map { "127.0.0.1:\($0)" }
                        + ["--cluster-replicas", "1", "--cluster-yes"], directory: folder)
                return create?.waitForExit() == .exited(0)
            }
            if formed { return (ports, processes) }
            for process in processes { await RedisServer.kill(process) }
        }
        try? FileManager.default.removeItem(atPath: folder)
        throw RedisError.connect("the cluster did not form (three tries, on fresh ports each)")
    }

    /// Runs `body` with a fresh cluster and stops it afterwards, whatever happens (awaited: no server
    /// outlives the test).
    static func with(nodeTimeout: Duration = .seconds(15), _ body: (RedisClusterServers) async throws -> Void) async throws {
        let cluster = try await RedisClusterServers(nodeTimeout: nodeTimeout)
        do {
            try await body(cluster)
        } catch {
            await cluster.stop()
            throw error
        }
        await cluster.stop()
    }

    /// A configuration for the cluster's first node (the seed), with the password.
    func configuration(commandTimeout: Duration = .seconds(5)) -> RedisConfiguration {
        RedisConfiguration(
            port: ports[0], credentials: RedisCredentials(password: Self.password), commandTimeout: commandTimeout, connections: 2)
    }

    /// A client of node `port` alone.
    func node(_ port: UInt16) -> RedisClient {
        RedisClient(
            RedisConfiguration(port: port, credentials: RedisCredentials(password: Self.password), commandTimeout: .seconds(5), connections: 1))
    }

    /// Every node says `cluster_state:ok`, and every master has a replica online (its first sync done).
    func isHealthy() async -> Bool {
        for port in ports.indices where processes[port].isRunning {
            let client = node(ports[port])
            defer { client.close() }
            guard let info = try? await client.send(["CLUSTER", "INFO"]).text, info.contains("cluster_state:ok"),
                let replication = try? await client.send(["INFO", "replication"]).text
            else { return false }
            if replication.contains("role:master"), !(replication.contains("connected_slaves:1") && replication.contains("state=online")) {
                return false
            }
        }
        return true
    }

    /// Waits until `client`'s slot map shows a replica beside every master (gossip spreads a new replica
    /// a moment after its sync): from then on its saves wait for replicas (`WAIT 1`).
    func untilReplicasAreKnown(to client: RedisClusterClient) async -> Bool {
        await waitUntil({
            guard (try? await client.readMap()) != nil else { return false }
            return (0..<RedisKeySlot.count).allSatisfy { slot in client.masterHasReplica(forSlot: slot)?.hasReplica ?? false }
        }, seconds: 30)
    }

    /// The node id and port of every master serving slots (a node's view may still call a new replica
    /// a master for a moment: one without slots is not counted).
    func masters() async throws -> [(id: String, port: UInt16)] {
        let client = node(ports[0])
        defer { client.close() }
        let text = try await client.send(["CLUSTER", "NODES"]).text ?? ""
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count > 8, fields[2].contains("master"), !fields[2].contains("fail"),
                let port = fields[1].split(separator: "@").first?.split(separator: ":").last.flatMap({ UInt16($0) })
            else { return nil }
            return (String(fields[0]), port)
        }
    }

    /// Whether a node other than the master on `port` — its replica, reading with `READONLY` — holds `key`.
    func replicaHolds(_ key: String, masterPort port: UInt16) async -> Bool {
        for other in ports where other != port {
            let client = node(other)
            defer { client.close() }
            if let answers = try? await client.pipeline([["READONLY"], ["EXISTS", key]]), answers.last == .integer(1) { return true }
        }
        return false
    }

    /// Starts moving `slot` from `source` to `target`, as a resharding does: the target importing, the
    /// source migrating (commands for keys not yet moved are sent on with `ASK`).
    func beginMoving(slot: Int, from source: (id: String, port: UInt16), to target: (id: String, port: UInt16)) async throws {
        let onSource = node(source.port)
        let onTarget = node(target.port)
        defer {
            onSource.close()
            onTarget.close()
        }
        _ = try await onTarget.send(["CLUSTER", "SETSLOT", String(slot), "IMPORTING", source.id])
        _ = try await onSource.send(["CLUSTER", "SETSLOT", String(slot), "MIGRATING", target.id])
    }

    /// Finishes moving `slot`: its keys (`MIGRATE`), then the owner, told to every master.
    func finishMoving(slot: Int, from source: (id: String, port: UInt16), to target: (id: String, port: UInt16)) async throws {
        let onSource = node(source.port)
        defer { onSource.close() }
        guard case .array(let keys?) = try await onSource.send(["CLUSTER", "GETKEYSINSLOT", String(slot), "1000"]) else {
            throw RedisError.unexpectedReply("no keys listed")
        }
        if !keys.isEmpty {
            _ = try await onSource.send(
                ["MIGRATE", "127.0.0.1", String(target.port), "", "0", "5000", "AUTH", Self.password, "KEYS"] + keys.compactMap(\.text))
        }
        for master in try await masters() {
            let node = node(master.port)
            defer { node.close() }
            _ = try await node.send(["CLUSTER", "SETSLOT", String(slot), "NODE", target.id])
        }
    }

    /// SIGKILLs the node on `port` (its replica takes over after the node timeout).
    func kill(port: UInt16) async {
        guard let index = ports.firstIndex(of: port) else { return }
        await RedisServer.kill(processes[index])
    }

    func stop() async {
        for process in processes { await RedisServer.kill(process) }
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// A cluster whose stop did not run before the test process moved on is at least told to stop
    /// (without waiting), so no server outlives the tests.
    deinit {
        for process in processes { process.send(SIGKILL) }
    }

    /// Polls `condition` every 200 ms for up to `seconds`.
    func waitUntil(_ condition: @escaping () async -> Bool, seconds: Int) async -> Bool {
        for _ in 0..<(seconds * 5) {
            if await condition() { return true }
            try? await Task.sleep(for: .milliseconds(200))
        }
        return false
    }
}
