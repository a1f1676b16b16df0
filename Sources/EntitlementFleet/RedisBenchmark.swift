import EntitlementCommandLine
import EntitlementSupport
import EntitlementEngine
import EntitlementRedis
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `entitle bench redis`: the token store's saves and loads per second on a real standalone
/// `redis-server` and on a real six-node Redis Cluster (both started here, on loopback), each beside
/// what `redis-benchmark` gets from the same server in the same run for the same commands (the save
/// script by `EVALSHA`, the load's `HMGET`) with as many commands in flight on as many connections: the
/// store's 50 callers share 4 connections (its client pipelines what waits), `redis-benchmark` runs 4
/// connections with 12 commands pipelined on each (`-c 4 -P 12`: 48 in flight). The two sides
/// alternate, three rounds of each; the ratio is each round's, and the table gives their median.
package struct RedisBenchmark {
    let seconds: Int
    /// Concurrent callers of the store.
    let callers = 50
    /// Connections per node (the store's client and `redis-benchmark -c`).
    let connections = 4
    /// Commands `redis-benchmark` pipelines on each connection (`-P`): about the store's callers per connection.
    let pipelined = 12
    /// Rounds of each side, alternated.
    let rounds = 3

    /// A bench of `seconds` seconds per figure.
    package init(seconds: Int) { self.seconds = seconds }

    /// Runs the bench and prints its table; its exit status.
    package func run() async -> ExitStatus {
        let folder = NSTemporaryDirectory() + "entitle-bench-redis-\(getpid())"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let standalone: RedisProcess
        let cluster: RedisClusterProcess
        do {
            standalone = try await RedisProcess.start(folder: folder)
        } catch {
            StandardError.write("entitle bench redis: \(error)\n")
            return .failure
        }
        do {
            cluster = try await RedisClusterProcess.start(folder: folder)
        } catch {
            await standalone.stop()
            StandardError.write("entitle bench redis: \(error)\n")
            return .failure
        }
        var status = ExitStatus.success
        do {
            print(
                "saves and loads: the store with \(callers) callers on \(connections) connections per node, \(seconds) s a round; "
                    + "redis-benchmark -c \(connections) -P \(pipelined), the same commands, as long; \(rounds) rounds of each, alternated "
                    + "(debug builds are slower)")
            print("| target | the store (saves+loads/s), each round | redis-benchmark, same commands (saves+loads/s), each round | ratio, median of the rounds |")
            print("|---|---|---|---|")
            let single = RedisConfiguration(port: standalone.port, commandTimeout: .seconds(5), connections: connections)
            try await report("standalone", store: RedisClient(single), port: standalone.port, cluster: false)
            // On the cluster, redis-benchmark asks the master of its one hash tag.
            let seed = RedisConfiguration(port: cluster.port, commandTimeout: .seconds(5), connections: connections)
            try await report("cluster, 3 masters", store: RedisClusterClient(seed), port: cluster.port, cluster: true)
        } catch {
            StandardError.write("entitle bench redis: \(error)\n")
            status = .failure
        }
        await standalone.stop()
        await cluster.stop()
        return status
    }

    /// One table row: the store's figure and redis-benchmark's on the same server.
    private func report(_ name: String, store client: any RedisCommandSender, port: UInt16, cluster: Bool) async throws {
        defer { client.close() }
        let store = RedisTokenStorage(client: client, keyPrefix: "bench")
        // The script's digest (loaded by the store's first save), for redis-benchmark's EVALSHA.
        // redis-benchmark draws a number for each placeholder, so a command's keys share one fixed hash
        // tag: on a cluster they all live on one master, the one asked (the store spreads over three).
        let tag = "{bench-device}"
        let deviceSet = "rb:\(tag):d"
        let digest = try await client.send(["SCRIPT", "LOAD", RedisTokenStorage.saveScript], key: deviceSet).text ?? ""
        let target = cluster ? ((client as? RedisClusterClient).flatMap { Self.port(of: $0.slotOwners[RedisKeySlot.of(deviceSet)]) } ?? port) : port
        let json = String(decoding: try JSONEncoder().encode(StoredTokens(selectedProvider: "acme-cable", deviceID: "d")), as: UTF8.self)
        let save = [
            "EVALSHA", digest, "3", "rb:\(tag):t:__rand_int__", deviceSet, "rb:\(tag):v", "0", json, "600000", "sim-requestor",
            "rb:saves:\(tag)", cluster ? "SPUBLISH" : "PUBLISH", String(RedisTokenStorage.schema),
        ]
        let load = ["HMGET", "rb:\(tag):t:__rand_int__", "v", "t", "s"]
        // Each once here first: redis-benchmark counts an error answer as a request served.
        for command in [save, load] {
            _ = try await client.send(command.map { $0.replacingOccurrences(of: "__rand_int__", with: "probe") }, key: deviceSet)
        }
        var ours: [Double] = [], theirs: [Double] = [], ratios: [Double] = []
        var requests = 20_000 * seconds  // redis-benchmark's count for about `seconds`, corrected from each round
        for round in 0..<rounds {
            let store = try await measureStore(store, round: round)
            let saves = try await Self.redisBenchmark(port: target, connections: connections, pipelined: pipelined, requests: requests, save)
            let loads = try await Self.redisBenchmark(port: target, connections: connections, pipelined: pipelined, requests: requests, load)
            let benchmark = 2 / (1 / saves + 1 / loads)
            requests = max(10_000, Int(benchmark * Double(seconds) / 2))
            ours.append(store)
            theirs.append(benchmark)
            ratios.append(store / benchmark)
        }
        func list(_ values: [Double]) -> String { values.map { String(format: "%.0f", $0) }.joined(separator: ", ") }
        print("| \(name) | \(list(ours)) | \(list(theirs)) | \(String(format: "%.0f %%", ratios.sorted()[ratios.count / 2] * 100)) |")
    }

    /// Saves and loads per second through the store: `callers` tasks, each saving (compare-and-set on
    /// the version it holds) then loading one of its devices (their own for each `round`), for `seconds`.
    private func measureStore(_ store: RedisTokenStorage, round: Int) async throws -> Double {
        let stop = ContinuousClock.now.advanced(by: .seconds(seconds))
        let started = ContinuousClock.now
        let operations = try await withThrowingTaskGroup(of: Int.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    var versions: [String: StorageVersion] = [:]
                    var turn = 0
                    var done = 0
                    while ContinuousClock.now < stop {
                        let device = "bench-r\(round)-\(caller)-\(turn % 20)"
                        turn += 1
                        let tokens = StoredTokens(selectedProvider: "acme-cable", deviceID: device)
                        versions[device] = try await store.save(
                            tokens, deviceID: device, requestorID: "sim-requestor", replacing: versions[device] ?? .absent)
                        _ = try await store.load(deviceID: device, requestorID: "sim-requestor")
                        done += 2
                    }
                    return done
                }
            }
            return try await group.reduce(0, +)
        }
        let elapsed = ContinuousClock.now - started
        return Double(operations) / (Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    // MARK: - redis-benchmark

    /// The port of a `host:port` node address.
    static func port(of address: String) -> UInt16? { address.split(separator: ":").last.flatMap { UInt16($0) } }

    /// Requests per second `redis-benchmark` reports for `requests` of `command` (its CSV line) at
    /// `connections` connections to the server on `port`, `pipelined` commands in flight on each.
    static func redisBenchmark(port: UInt16, connections: Int, pipelined: Int, requests: Int, _ command: [String]) async throws -> Double {
        let output = NSTemporaryDirectory() + "entitle-redis-benchmark-\(UUID().uuidString).csv"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let arguments = ["-p", "\(port)", "-c", "\(connections)", "-n", "\(requests)", "-r", "100000", "-P", "\(pipelined)", "--csv"]
        let process = try ChildProcess.start("redis-benchmark", arguments + command, output: output)
        guard await process.waitForExit(upTo: .seconds(120)) else {
            process.send(SIGKILL)
            throw FleetError("redis-benchmark did not finish")
        }
        let text = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        // "test","rps", then six latencies: the rps is the seventh field from the end (the test's name,
        // the command itself, may hold commas).
        let line = text.split(separator: "\n").last { $0.hasPrefix("\"") && !$0.hasPrefix("\"test\"") }
        let fields = line.map { $0.split(separator: ",", omittingEmptySubsequences: false) } ?? []
        guard fields.count >= 8, let value = Double(fields[fields.count - 7].trimmingCharacters(in: CharacterSet(charactersIn: "\"")))
        else { throw FleetError("redis-benchmark gave no figure (is it installed?)") }
        return value
    }
}
