import EntitlementEngine
import Synchronization

/// A Redis Cluster client: the slot map read from the cluster (`CLUSTER SLOTS`), each command sent to
/// the master of its key's slot (`RedisKeySlot`) over that node's own ``RedisClient``, and the
/// cluster's redirections followed within the command timeout — `MOVED` (the slot moved: its new owner
/// is noted, and the map read again), `ASK` (the slot is moving: `ASKING` first, once), and a passing refusal
/// (`RESPValue/isPassingRefusal`: `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, …) or a lost node (a
/// failover under way: the map is read again after a short pause). Replicas are never written to: commands go to the masters the map names.
/// A storm of `MOVED` (a misbehaving node or proxy) costs a map read at most every
/// 100 ms, and a `MOVED` makes it meet at most 8 nodes beyond the masters the
/// map names (past them, the slot's owner is asked again after a pause).
///
/// With `metrics`, the measurements of ``RedisClient`` for the whole cluster: each command timed once
/// however it was redirected, and `entitle.redis.retries` counted by `reason` (`moved`, `ask`,
/// `refused`, `lostNode`).
public final class RedisClusterClient: RedisCommandSender {
    /// The seed node's configuration; every node is reached with its credentials, database 0 and limits.
    public let configuration: RedisConfiguration
    /// Where the client's measurements go.
    public let metrics: (any EngineMetricsHandler)?
    private let state = Mutex(State())

    private struct State {
        /// The master of each slot, as `host:port` (empty before the first read, or for a slot no node serves).
        var owners: [String] = []
        /// The masters the map names.
        var masters: Set<String> = []
        /// How many healthy replicas each master (`host:port`) had when the map was read, and when that was.
        var replicas: [String: Int] = [:]
        var mapReadAt = ContinuousClock.now
        var refreshing = false
        /// Whether a read of the map a `MOVED` asked for is running (one at a time).
        var readingForMoved = false
        /// One client per node met.
        var nodes: [String: RedisClient] = [:]
        var closed = false
    }

    /// A client for the cluster `configuration` points at (any node of it); the map is read on first use.
    public init(_ configuration: RedisConfiguration, metrics: (any EngineMetricsHandler)? = nil) {
        self.configuration = configuration
        self.metrics = metrics
    }

    deinit { close() }

    public func send(_ command: [String], key: String?) async throws(RedisError) -> RESPValue {
        let answer = try await pipeline([command], key: key)[0]
        if case .error(let message) = answer { throw .answer(message) }
        return answer
    }

    public func pipeline(_ commands: [[String]], key: String?) async throws(RedisError) -> [RESPValue] {
        guard !commands.isEmpty else { return [] }
        guard let metrics else { return try await routed(commands, key: key) }
        let started = ContinuousClock.now
        do throws(RedisError) {
            let answers = try await routed(commands, key: key)
            RedisClient.time(commands, since: started, outcome: answers.contains(where: \.isErrorAnswer) ? "error" : "ok", on: metrics)
            return answers
        } catch {
            RedisClient.time(commands, since: started, outcome: error.code.description, on: metrics)
            throw error
        }
    }

    private func retried(_ reason: String) {
        metrics?.increment(counter: "entitle.redis.retries", dimensions: [("reason", reason)], by: 1)
    }

    /// `commands` sent to their slot's master, following the cluster's redirections.
    private func routed(_ commands: [[String]], key: String?) async throws(RedisError) -> [RESPValue] {
        let deadline = ContinuousClock.now.advanced(by: configuration.commandTimeout)
        let slot = key.map(RedisKeySlot.of)
        var target = try await owner(of: slot, until: deadline)
        var asking = false
        var lastFailure = RedisError.timeout
        while ContinuousClock.now < deadline {
            guard !Task.isCancelled else { throw .cancelled }
            let batch = asking ? [["ASKING"]] + commands : commands
            let answers: [RESPValue]
            do throws(RedisError) {
                answers = Array(try await node(target).pipeline(batch).dropFirst(asking ? 1 : 0))
            } catch {
                guard error.isTransient else { throw error }
                // The node is gone or hung (a failover, most likely): read the map again and retry.
                lastFailure = error
                retried("lostNode")
                try await pause(until: deadline)
                if (try? await refresh(until: deadline, avoiding: target)) != nil, let owner = try? owner(slot) { target = owner }
                asking = false
                continue
            }
            asking = false
            guard let redirection = answers.lazy.compactMap(Redirection.init).first else { return answers }
            switch redirection {
            case .moved(let address):
                retried("moved")
                await refreshAfterMoved(until: deadline)
                // Followed to a master the map names, a node met before, or a new one while fewer than
                // ``extraNodes`` beyond the masters are known, and noted as the slot's owner (a map read
                // skipped by the interval, or answered by a node that has not heard of the move, would leave
                // the old one); else the slot's owner is asked again after a pause: a node or proxy naming
                // address after address gets no client for each.
                let followed = state.withLock { state in
                    let followed =
                        state.masters.contains(address) || state.nodes[address] != nil || state.nodes.count < state.masters.count + Self.extraNodes
                    if followed, let slot, slot < state.owners.count { state.owners[slot] = address }
                    return followed
                }
                if followed {
                    target = address
                } else {
                    try await pause(until: deadline)
                    target = try owner(slot)
                }
            case .ask(let address):
                retried("ask")
                target = address
                asking = true
            case .retry(let message):
                retried("refused")
                lastFailure = .server(message)
                try await pause(until: deadline)
                if (try? await refresh(until: deadline)) != nil, let owner = try? owner(slot) { target = owner }
            }
        }
        throw lastFailure
    }

    public func close() {
        let nodes = state.withLock { state -> [RedisClient] in
            state.closed = true
            defer { state.nodes.removeAll() }
            return Array(state.nodes.values)
        }
        for node in nodes { node.close() }
    }

    /// The slot map as last read: the master (`host:port`) of every slot.
    package var slotOwners: [String] { state.withLock { $0.owners } }

    /// Whether the master of `key`'s slot had a healthy replica when the map was last read (`CLUSTER
    /// SLOTS` leaves failed nodes out), and how long ago that read was; nil before the first read.
    func masterHasReplica(forKey key: String) -> (hasReplica: Bool, age: Duration)? {
        masterHasReplica(forSlot: RedisKeySlot.of(key))
    }

    /// ``masterHasReplica(forKey:)`` for a slot.
    func masterHasReplica(forSlot slot: Int) -> (hasReplica: Bool, age: Duration)? {
        state.withLock { state in
            guard slot < state.owners.count, !state.owners[slot].isEmpty else { return nil }
            return ((state.replicas[state.owners[slot]] ?? 0) > 0, ContinuousClock.now - state.mapReadAt)
        }
    }

    /// The shortest time between two reads of the map a `MOVED` asks for: a resharding moves many slots
    /// at once, and a misbehaving node or proxy may answer `MOVED` to everything.
    package static let movedMapInterval = Duration.milliseconds(100)

    /// Reads the map again after a `MOVED`, unless it was read within ``movedMapInterval`` or such a read
    /// is running (the redirection itself is followed either way).
    private func refreshAfterMoved(until deadline: ContinuousClock.Instant) async {
        let due = state.withLock { state in
            guard !state.readingForMoved, ContinuousClock.now - state.mapReadAt >= Self.movedMapInterval else { return false }
            state.readingForMoved = true
            return true
        }
        guard due else { return }
        _ = try? await refresh(until: deadline)
        state.withLock { $0.readingForMoved = false }
    }

    /// The most nodes beyond the masters the map names that a `MOVED` makes the client meet (replicas
    /// promoted in a failover, addresses a redirection named): past it, a `MOVED` to a new one is not
    /// followed.
    package static let extraNodes = 8

    /// How many node clients the client keeps.
    var nodeCount: Int { state.withLock { $0.nodes.count } }

    /// Reads the map again on a task of its own, unless a read started that way is still running.
    func refreshSoon() {
        guard state.withLock({ state in
            defer { state.refreshing = true }
            return !state.refreshing && !state.closed
        }) else { return }
        Task {
            _ = try? await readMap()
            state.withLock { $0.refreshing = false }
        }
    }

    // MARK: - The map

    /// The master of `slot` (any node for nil), reading the map first if it was never read.
    private func owner(of slot: Int?, until deadline: ContinuousClock.Instant) async throws(RedisError) -> String {
        if state.withLock({ $0.owners.isEmpty }) { try await refresh(until: deadline) }
        return try owner(slot)
    }

    private func owner(_ slot: Int?) throws(RedisError) -> String {
        let owners = state.withLock { $0.owners }
        guard let slot else { return owners.first { !$0.isEmpty } ?? seed }
        guard slot < owners.count, !owners[slot].isEmpty else { throw .server("CLUSTERDOWN no node serves slot \(slot)") }
        return owners[slot]
    }

    /// Reads the map again and returns it (the master of every slot; empty where no node serves one).
    func readMap() async throws(RedisError) -> [String] {
        try await refresh(until: ContinuousClock.now.advanced(by: configuration.commandTimeout))
        return slotOwners
    }

    private var seed: String { Self.address(configuration.host, configuration.port) }

    /// Reads the map (`CLUSTER SLOTS`) from the first node that answers — the seed, then the others
    /// met, `avoiding` one that just failed (tried last).
    private func refresh(until deadline: ContinuousClock.Instant, avoiding failed: String? = nil) async throws(RedisError) {
        let known = state.withLock { Array($0.nodes.keys).sorted() }
        var candidates: [String] = []
        for address in [seed] + known where address != failed && !candidates.contains(address) { candidates.append(address) }
        if let failed { candidates.append(failed) }  // last: it may be back
        var failure = RedisError.connect("no node of the cluster answered")
        for address in candidates {
            guard ContinuousClock.now < deadline else { break }
            do throws(RedisError) {
                let answer = try await node(address).send(["CLUSTER", "SLOTS"])
                let map = try Self.map(from: answer, askedAt: address)
                state.withLock { state in
                    state.owners = map.owners
                    state.masters = Set(map.owners.filter { !$0.isEmpty })
                    state.replicas = map.replicas
                    state.mapReadAt = .now
                }
                return
            } catch {
                failure = error
            }
        }
        throw failure
    }

    /// The master of every slot, and each master's replica count, from a `CLUSTER SLOTS` answer
    /// (`[start, end, [host, port, id], replicas…]` per range); a node announced without a host is the one asked.
    static func map(from answer: RESPValue, askedAt asked: String) throws(RedisError) -> (owners: [String], replicas: [String: Int]) {
        guard case .array(let ranges?) = answer else { throw .unexpectedReply("CLUSTER SLOTS is not an array") }
        var owners = [String](repeating: "", count: RedisKeySlot.count)
        var replicas: [String: Int] = [:]
        for range in ranges {
            guard case .array(let fields?) = range, fields.count >= 3, case .integer(let start) = fields[0],
                case .integer(let end) = fields[1], case .array(let master?) = fields[2], master.count >= 2,
                case .integer(let port) = master[1], (0..<Int64(RedisKeySlot.count)).contains(start), (start..<Int64(RedisKeySlot.count)).contains(end),
                let portNumber = UInt16(exactly: port)
            else { throw .unexpectedReply("a CLUSTER SLOTS range is not [start, end, [host, port, …], …]") }
            let host = master[0].text ?? ""
            let owner = host.isEmpty || host == "?" ? asked : address(host, portNumber)
            for slot in Int(start)...Int(end) { owners[slot] = owner }
            replicas[owner] = max(replicas[owner] ?? 0, fields.count - 3)
        }
        return (owners, replicas)
    }

    // MARK: - Nodes

    /// `host:port` (`[host]:port` for IPv6).
    static func address(_ host: String, _ port: UInt16) -> String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }

    /// The client of the node at `address` (made on first use, with the seed's credentials and limits).
    private func node(_ address: String) throws(RedisError) -> RedisClient {
        try state.withLock { state throws(RedisError) -> RedisClient in
            guard !state.closed else { throw .closed }
            if let client = state.nodes[address] { return client }
            // Retried and timed here, with the map; the node's client counts its connections.
            let client = RedisClient(try configuration(ofNode: address), metrics: metrics, retryingPassingRefusals: false, timingCommands: false)
            state.nodes[address] = client
            return client
        }
    }

    /// The configuration for the node at `address`: the seed's credentials and limits, database 0 (a
    /// cluster has one).
    func configuration(ofNode address: String) throws(RedisError) -> RedisConfiguration {
        guard let (host, port) = Self.split(address) else { throw .unexpectedReply("a node address that is not host:port") }
        var node = configuration
        node.host = host
        node.port = port
        node.database = 0
        return node
    }

    static func split(_ address: String) -> (String, UInt16)? {
        guard let colon = address.lastIndex(of: ":"), let port = UInt16(address[address.index(after: colon)...]) else { return nil }
        var host = address[..<colon]
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        return (String(host), port)
    }

    /// A short pause before a retry, never past `deadline`.
    private func pause(until deadline: ContinuousClock.Instant) async throws(RedisError) {
        let left = deadline - ContinuousClock.now
        guard left > .zero else { throw .timeout }
        try? await Task.sleep(for: min(.milliseconds(100), left))
    }

    /// What an error answer asks of the client.
    enum Redirection {
        case moved(String)
        case ask(String)
        case retry(String)

        init?(_ answer: RESPValue) {
            guard case .error(let message) = answer else { return nil }
            let words = message.split(separator: " ")
            switch words.first {
            case "MOVED" where words.count == 3: self = .moved(String(words[2]))
            case "ASK" where words.count == 3: self = .ask(String(words[2]))
            default:
                guard answer.isPassingRefusal else { return nil }
                self = .retry(message)
            }
        }
    }
}

extension RedisError {
    /// Whether the command may succeed if sent again shortly (the node was unreachable, broke or hung).
    var isTransient: Bool {
        [.connect, .connectionLost, .timeout].contains(code)
    }
}
