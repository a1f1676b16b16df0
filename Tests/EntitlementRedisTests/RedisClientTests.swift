import EntitlementSimulator
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

/// The client against a real redis-server: commands, pipelines, binary-safe values, error answers,
/// transactions; and its failures typed: refused, timed out, a server that restarts.
@Suite("Redis client against redis-server", RedisServer.trait)
struct RedisClientTests {
    @Test func commandsPipelinesAndBinarySafeValues() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration())
        defer { client.close() }
        try await expectEqual(client.send(["PING"]), .simpleString("PONG"))
        let binary = "a\r\nb\u{0}ключ"
        try await expectEqual(client.send(["SET", "k", binary]), .simpleString("OK"))
        try await expectEqual(client.send(["GET", "k"]).text, binary)
        try await expectEqual(client.send(["GET", "missing"]), .bulkString(nil))
        let answers = try await client.pipeline([["INCR", "n"], ["INCR", "n"], ["LPUSH", "k", "x"], ["INCRBY", "n", "40"]])
        #expect(answers[0] == .integer(1) && answers[1] == .integer(2) && answers[3] == .integer(42))
        guard case .error(let refusal) = answers[2] else { Issue.record("LPUSH on a string: \(answers[2])"); return }
        #expect(refusal.hasPrefix("WRONGTYPE"))
        await #expect(throws: RedisError.self) { try await client.send(["NOSUCHCOMMAND"]) }
        await server.stop()
    }

    /// Callers waiting at the same time share a connection's writes (their commands pipelined): each
    /// still gets its own answers, in its own order, whatever their sizes.
    @Test func concurrentCallersOnOneConnectionEachGetTheirOwnAnswers() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration(connections: 1))
        defer { client.close() }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<200 {
                group.addTask {
                    let value = "value-\(caller)-" + String(repeating: "x", count: caller * 37 % 5000)
                    try await expectEqual(client.send(["SET", "k\(caller)", value]), .simpleString("OK"))
                    let answers = try await client.pipeline([["GET", "k\(caller)"], ["STRLEN", "k\(caller)"], ["LPUSH", "k\(caller)", "x"]])
                    expectEqual(answers.count, 3)
                    expectEqual(answers[0].text, value, "caller \(caller) read another caller's value")
                    expectEqual(answers[1], .integer(Int64(value.utf8.count)))
                    guard case .error(let refusal) = answers[2], refusal.hasPrefix("WRONGTYPE") else {
                        Issue.record("caller \(caller): LPUSH on a string answered \(answers[2])")
                        return
                    }
                }
            }
            try await group.waitForAll()
        }
        await server.stop()
    }

    @Test func aTransactionWatchingAKeyIsAbortedByAnotherWriter() async throws {
        let server = try await RedisServer()
        let mine = RedisClient(server.configuration(connections: 1))
        let theirs = RedisClient(server.configuration(connections: 1))
        defer { mine.close(); theirs.close() }
        _ = try await mine.send(["SET", "v", "1"])
        _ = try await mine.send(["WATCH", "v"])
        _ = try await theirs.send(["SET", "v", "2"])
        let answers = try await mine.pipeline([["MULTI"], ["SET", "v", "3"], ["EXEC"]])
        expectEqual(answers, [.simpleString("OK"), .simpleString("QUEUED"), .array(nil)], "EXEC is aborted")
        try await expectEqual(mine.send(["GET", "v"]).text, "2")
        await server.stop()
    }

    @Test func aRefusedConnectionIsATypedErrorAndNothingHangs() async throws {
        let refusing = try RedisServer.refusingPort()
        defer { close(refusing.fd) }
        let client = RedisClient(RedisConfiguration(port: refusing.port, connectTimeout: .milliseconds(500), connections: 1))
        defer { client.close() }
        await #expect(throws: RedisError.connect("connection refused")) { try await client.send(["PING"]) }
    }

    @Test func aServerThatNeverAnswersTimesOutAndTheConnectionIsDropped() async throws {
        // A listener that accepts (the kernel does, into its backlog) but never answers.
        let (fd, port) = try RedisServer.refusingPort()
        defer { close(fd) }
        listen(fd, 8)
        let client = RedisClient(RedisConfiguration(port: port, commandTimeout: .milliseconds(300), connections: 1))
        defer { client.close() }
        let start = ContinuousClock.now
        await #expect(throws: RedisError.timeout) { try await client.send(["PING"]) }
        // Not a speed claim: only that it ends (a loaded 2-core run has taken 13 s to get here).
        #expect(ContinuousClock.now - start < .seconds(60))
    }

    /// Commands queued behind a server that hangs fail by their own deadline, counted from when they
    /// were sent — not one timeout after another (120 × 1 s = 120 s at the least). The bound sits far from
    /// both: about a second when each ends by its own deadline, and room for a loaded two-core run that
    /// has held every task back for 35 s.
    @Test func commandsQueuedBehindAHungServerFailByTheirOwnDeadline() async throws {
        let (fd, port) = try RedisServer.refusingPort()
        defer { close(fd) }
        listen(fd, 8)
        let client = RedisClient(RedisConfiguration(port: port, commandTimeout: .seconds(1), connections: 1))
        defer { client.close() }
        let start = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<120 {
                group.addTask { await #expect(throws: RedisError.timeout) { try await client.send(["PING"]) } }
            }
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed < .seconds(100), "every command ended near its own deadline: \(elapsed)")
    }

    @Test func aRestartedServerCostsOnlyTheCommandsUnderWay() async throws {
        let server = try await RedisServer()
        let client = RedisClient(server.configuration(connectTimeout: .milliseconds(500), connections: 1))
        defer { client.close() }
        _ = try await client.send(["SET", "k", "v"])
        await server.stop()
        await #expect(throws: RedisError.self) { try await client.send(["GET", "k"]) }
        let again = try await RedisServer.restart(on: server.port)
        var answer: RESPValue?
        for _ in 0..<50 where answer == nil {
            answer = try? await client.send(["GET", "k"])
            if answer == nil { try await Task.sleep(for: .milliseconds(100)) }
        }
        expectEqual(answer, .bulkString(nil), "a fresh server without persistence: the key is gone, the client reconnected")
        await RedisServer.kill(again)
    }

    /// A restart while every connection is idle costs no command: each connection the server closed is
    /// found closed, and replaced, before a command is sent on it.
    @Test func aRestartWhileIdleCostsNoCommand() async throws {
        let server = try await RedisServer()
        let measurements = RedisMeasurements()
        let client = RedisClient(server.configuration(connectTimeout: .milliseconds(500), connections: 4), metrics: measurements)
        defer { client.close() }
        for _ in 0..<8 { _ = try await client.send(["PING"]) }  // every lane has its connection open
        await server.stop()
        let again = try await RedisServer.restart(on: server.port)
        try await Task.sleep(for: .milliseconds(100))  // the closes have arrived
        for number in 0..<8 {
            try await expectEqual(client.send(["PING"]), .simpleString("PONG"), "PING \(number) after the restart")
        }
        // The metrics tell the restart: four first connections, four reconnections, every PING timed.
        expectEqual(measurements.count("entitle.redis.connects again=false"), 4, "\(measurements.keys)")
        expectEqual(measurements.count("entitle.redis.connects again=true"), 4, "\(measurements.keys)")
        expectEqual(measurements.timings("entitle.redis.commands command=PING outcome=ok"), 16, "\(measurements.keys)")
        await RedisServer.kill(again)
    }

    /// A server restarted with data answers `LOADING` while it reads it: the client sends the command
    /// again until the data is there, within the command's timeout (a client that does not retry sees
    /// the refusal, so the server was loading). The load is slowed to thirty seconds (20,000 keys, 1,500 µs each):
    /// a loaded machine's delays stay well inside it.
    @Test func aServerLoadingItsDataIsWaitedFor() async throws {
        let folder = ScratchSpace.path("entitle-loading-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let storage = ["--dir", folder, "--dbfilename", "data.rdb"]
        let server = try await RedisServer(settings: storage + ["--enable-debug-command", "yes"])
        let setup = RedisClient(server.configuration())
        _ = try await setup.send(["DEBUG", "POPULATE", "20000"])
        _ = try await setup.send(["SAVE"])
        setup.close()
        await server.stop()
        let loading = try ChildProcess.spawn(
            RedisServer.path,
            RedisServer.arguments(server.port) + storage + ["--key-load-delay", "1500", "--loading-process-events-interval-bytes", "1024"])
        defer { Task { await RedisServer.kill(loading) } }
        let configuration = server.configuration(connectTimeout: .seconds(2), commandTimeout: .seconds(60), connections: 1)
        let plain = RedisClient(configuration, metrics: nil, retryingPassingRefusals: false, timingCommands: true)
        defer { plain.close() }
        var refused: RESPValue?
        for _ in 0..<500 where refused == nil {  // the server starts, then loads for about thirty seconds
            if let answer = try? await plain.pipeline([["GET", "key:1"]]).first, answer.isPassingRefusal { refused = answer }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(refused?.isPassingRefusal == true && "\(refused!)".contains("LOADING"), "the server was loading: \(String(describing: refused))")
        let measurements = RedisMeasurements()
        let client = RedisClient(configuration, metrics: measurements)
        defer { client.close() }
        try await expectEqual(client.send(["GET", "key:1"]).text, "value:1")
        #expect(measurements.count("entitle.redis.retries reason=refused") > 0, "the refusals were counted: \(measurements.keys)")
        expectEqual(measurements.timings("entitle.redis.commands command=GET outcome=ok"), 1, "timed once, retries and all")
    }

    /// A server that takes the connection and never answers: the command's wait ends when its task is
    /// cancelled, long before its hour's timeout (the bound leaves room for a loaded machine: a full
    /// suite on two cores once took 20 s to finish a cancelled wait).
    @Test func aCancelledWaitEndsAtOnce() async throws {
        let (fd, port) = try RedisServer.refusingPort()
        defer { close(fd) }
        _ = Glibc.listen(fd, 8)  // connections are taken, nothing is ever read or answered
        let client = RedisClient(RedisConfiguration(port: port, commandTimeout: .seconds(3_600), connections: 1))
        defer { client.close() }
        let waiting = Task { () -> RedisError? in
            do throws(RedisError) {
                _ = try await client.send(["PING"])
                return nil
            } catch {
                return error
            }
        }
        try await Task.sleep(for: .milliseconds(300))
        let cancelled = ContinuousClock.now
        waiting.cancel()
        await expectEqual(waiting.value, .cancelled)
        #expect(ContinuousClock.now - cancelled < .seconds(600))
    }

    @Test func aClosedClientRefusesAtOnce() async throws {
        let client = RedisClient(RedisConfiguration(port: 1, connections: 1))
        client.close()
        await #expect(throws: RedisError.closed) { try await client.send(["PING"]) }
    }
}
