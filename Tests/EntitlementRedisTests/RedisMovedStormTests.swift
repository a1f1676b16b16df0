#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization
import Testing

@testable import EntitlementRedis

/// Cluster nodes gone wrong (or a misbehaving proxy) that answer `MOVED` to each other, addresses the
/// cluster's map does not name: the client reads the map at most once per
/// ``RedisClusterClient/movedMapInterval``, follows no `MOVED` to a node the map does not name (it asks
/// the slot's owner again after a pause) and keeps a bounded number of node clients (0.9.2 kept a client
/// for every address named — 208 in 4 s — and read the map at every `MOVED`, ~270 a second).
@Suite("Redis Cluster client under a MOVED storm")
struct RedisMovedStormTests {
    @Test func aStormOfMovedGrowsNeitherNodeClientsNorMapReadsWithoutBound() async throws {
        let nodes = try FakeMovedNodes(count: 40)
        defer { nodes.stop() }
        var configuration = RedisConfiguration(host: "127.0.0.1", port: nodes.ports[0], connections: 1)
        configuration.commandTimeout = .seconds(1)
        let client = RedisClusterClient(configuration)
        defer { client.close() }
        // Commands until the nodes answered MOVED 50 times: 4 s on a quiet machine; 31 in 124 s was seen
        // under the whole suite beside a build and a fleet run, so only a hang meets the 900 s bound.
        let started = ContinuousClock.now
        var commands = 0
        while nodes.moved.load(ordering: .relaxed) < 50, ContinuousClock.now - started < .seconds(900) {
            _ = try? await client.send(["GET", "key-\(commands)"], key: "key-\(commands)")
            commands += 1
        }
        let elapsed = ContinuousClock.now - started
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let moved = nodes.moved.load(ordering: .relaxed)
        let reads = nodes.mapReads.load(ordering: .relaxed)
        #expect(moved >= 50, "the nodes answered MOVED \(moved) times in \(seconds) s")
        #expect(client.nodeCount <= 2 + RedisClusterClient.extraNodes, "node clients kept: \(client.nodeCount)")
        // One read per 100 ms a MOVED asks for, and as many after a node that did not answer in time (a
        // loaded machine), and the first: far from one per MOVED.
        #expect(Double(reads) <= 2 * seconds / 0.1 + 4, "\(reads) map reads for \(moved) MOVED in \(seconds) s")
    }
}

/// RESP servers on loopback ports, all alike: `CLUSTER SLOTS` names the first as the one master of every
/// slot, `HELLO` and other set-up answer OK, and every other command is answered `MOVED` to another of
/// them, in turn — a storm that never settles, at full speed.
final class FakeMovedNodes: @unchecked Sendable {
    let ports: [UInt16]
    let moved = Atomic<Int>(0)
    let mapReads = Atomic<Int>(0)
    private let listeners: [Int32]
    private let stopped = Atomic<Bool>(false)

    init(count: Int) throws {
        var listeners: [Int32] = []
        var ports: [UInt16] = []
        for _ in 0..<count {
            let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            let bound = withUnsafePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, length) } }
            guard bound == 0, listen(listener, 16) == 0 else { throw RedisError.connect("a fake node could not listen") }
            withUnsafeMutablePointer(to: &address) { _ = $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(listener, $0, &length) } }
            listeners.append(listener)
            ports.append(UInt16(bigEndian: address.sin_port))
        }
        self.listeners = listeners
        self.ports = ports
        for listener in listeners { Thread.detachNewThread { [self] in acceptLoop(listener) } }
    }

    /// Stops accepting; each accept thread closes its listener as it leaves (closed here, its number could be
    /// another test's listener by the time the thread calls `accept` on it, and take that test's connection).
    func stop() {
        stopped.store(true, ordering: .relaxed)
        for listener in listeners { shutdown(listener, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop(_ listener: Int32) {
        defer { close(listener) }
        while !stopped.load(ordering: .relaxed) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread.detachNewThread { [self] in serve(connection) }
        }
    }

    private func serve(_ connection: Int32) {
        defer { close(connection) }
        var parser = RESPParser()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !stopped.load(ordering: .relaxed) {
            let count = read(connection, &buffer, buffer.count)
            guard count > 0 else { return }
            parser.append(buffer[0..<count])
            while let value = try? parser.next() {
                guard case .array(let parts?) = value else { return }
                let words = parts.compactMap(\.text).map { $0.uppercased() }
                let answer: RESPValue
                switch words.first {
                case "CLUSTER":
                    mapReads.add(1, ordering: .relaxed)
                    answer = .array([.array([.integer(0), .integer(16_383), .array([.bulk("127.0.0.1"), .integer(Int64(ports[0]))])])])
                case "HELLO", "SELECT", "CLIENT", "AUTH", "PING", "ASKING":
                    answer = .simpleString("OK")
                default:
                    let turn = moved.add(1, ordering: .relaxed).newValue
                    answer = .error("MOVED 1 127.0.0.1:\(ports[1 + turn % (ports.count - 1)])")
                }
                let bytes = answer.encoded
                _ = bytes.withUnsafeBytes { write(connection, $0.baseAddress, bytes.count) }
            }
        }
    }
}
