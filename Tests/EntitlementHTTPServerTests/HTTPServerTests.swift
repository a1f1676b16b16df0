import EntitlementSupport
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

@testable import EntitlementHTTPServer

@Suite("HTTP/1.1 server on loopback")
struct HTTPServerTests {
    private static func echo(_ request: HTTPRequest) async -> HTTPResponse {
        .text(200, "\(request.method) \(request.target) \(request.body.count)")
    }

    /// The limits of a test that is not about the server's waits: a test's client connects on one thread
    /// and sends from its task, which a loaded machine may leave unscheduled for longer than the default
    /// 30 s idle time (a connection that sends nothing that long is closed, rightly) — so ten minutes,
    /// far from any behaviour under test.
    private static let patient = HTTPServerLimits(requestTimeout: .seconds(600), idleTimeout: .seconds(600))

    /// Runs `body` with a server, shutting it down afterwards whatever happens.
    private func serving(
        _ limits: HTTPServerLimits = patient, handler: @escaping HTTPServer.Handler = echo,
        _ body: (HTTPServer) async throws -> Void
    ) async throws {
        let server = try HTTPServer(limits: limits, handler: handler)
        do {
            try await body(server)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }

    /// Response splitting: a header field that cannot be written safely (a value with CR LF, NUL or
    /// another control character, a name that is not a token) is never written; a 500 goes out instead.
    @Test(arguments: [
        ("Location", "https://app.example/done\r\nSet-Cookie: session=stolen"), ("Location", "https://x/\n\n<html>"),
        ("X-Echo", "a\u{0}b"), ("X-Echo", "a\u{1B}b"), ("Bad Name", "v"), ("", "v"), ("X:Y", "v"),
    ])
    func aHeaderThatCannotBeWrittenSafelyIsNeverWritten(name: String, value: String) {
        let answer = HTTPResponse(status: 302, headers: HTTPHeaders([(name, value), ("X-Other", "kept out too")]))
        let text = String(decoding: answer.serialized(keepAlive: true, date: "Wed, 25 Nov 2026 19:00:00 GMT"), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 500 Internal Server Error\r\n"), "\(text)")
        #expect(!text.contains("stolen") && !text.contains("<html>") && !text.contains("X-Other") && !text.contains("Location"))
        let head = text.components(separatedBy: "\r\n\r\n")[0]
        #expect(head.split(separator: "\r\n").allSatisfy { !$0.contains("\n") && !$0.contains("\u{0}") })
    }

    @Test func safeHeadersAreWrittenAsGiven() {
        let answer = HTTPResponse(status: 302, headers: HTTPHeaders([("Location", "https://app.example/done?x=%0D%0A&é"), ("X-Tab", "a\tb")]))
        let text = String(decoding: answer.serialized(keepAlive: false, date: "d"), as: UTF8.self)
        #expect(text.hasPrefix("HTTP/1.1 302 Found\r\nLocation: https://app.example/done?x=%0D%0A&é\r\nX-Tab: a\tb\r\n"), "\(text)")
    }

    @Test func aChunkedRequestBodyIsServed() async throws {
        try await serving { server in
            let connection = try #require(await RawConnection.open(port: server.port))
            connection.send("POST /b HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n1\r\nc\r\n0\r\n\r\n")
            let answers = await connection.readAnswers(1)
            expectEqual(answers.first?.hasPrefix("HTTP/1.1 200 OK\r\n"), true)
            expectEqual(answers.first?.hasSuffix("POST /b 3"), true, "\(answers)")
        }
    }

    @Test func servesPipelinedRequestsOnOneKeptAliveConnection() async throws {
        try await serving { server in
            let connection = try #require(await RawConnection.open(port: server.port))
            connection.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nPOST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n\r\nabc")
            let answers = await connection.readAnswers(2)
            expectEqual(answers.count, 2)
            expectEqual(answers.first?.hasPrefix("HTTP/1.1 200 OK\r\n"), true)
            expectEqual(answers.first?.contains("Connection: keep-alive"), true)
            expectEqual(answers.first?.hasSuffix("GET /a 0"), true)
            expectEqual(answers.last?.hasSuffix("POST /b 3"), true)
        }
    }

    @Test(arguments: [
        ("GARBAGE\r\n\r\n", "400 Bad Request"),
        ("GET / HTTP/1.1\r\nHost: x\r\nX: " + String(repeating: "a", count: 20_000) + "\r\n\r\n", "431 Request Header Fields Too Large"),
        ("POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5000000\r\n\r\n", "413 Content Too Large"),
        ("GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "501 Not Implemented"),
        ("GET / HTTP/3.0\r\nHost: x\r\n\r\n", "505 HTTP Version Not Supported"),
    ])
    func refusalsAnswerTheirStatusAndClose(request: String, status: String) async throws {
        try await serving { server in
            let connection = try #require(await RawConnection.open(port: server.port))
            connection.send(request)
            let answer = await connection.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 \(status)\r\n"), "got: \(answer.prefix(80))")
            #expect(answer.contains("Connection: close"))
        }
    }

    @Test func aSlowClientGets408() async throws {
        try await serving(HTTPServerLimits(requestTimeout: .milliseconds(300), idleTimeout: .seconds(600))) { server in
            let slow = try #require(await RawConnection.open(port: server.port))
            slow.send("GET / HTTP/1.1\r\nHost: x\r\n")
            #expect(await slow.readToEnd().hasPrefix("HTTP/1.1 408 Request Timeout\r\n"))
        }
    }

    @Test func anIdleConnectionIsClosedQuietly() async throws {
        try await serving(HTTPServerLimits(idleTimeout: .milliseconds(300))) { server in
            let idle = try #require(await RawConnection.open(port: server.port))
            await expectEqual(idle.readToEnd(), "", "nothing started, nothing answered")
        }
    }

    @Test func manyConnectionsAtOnceAreAllAnswered() async throws {
        try await serving { server in
            let port = server.port
            let answers = await withTaskGroup(of: String.self) { group in
                for index in 0..<100 {
                    group.addTask {
                        guard let connection = await RawConnection.open(port: port) else { return "no connection" }
                        connection.send("GET /\(index) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
                        return await connection.readToEnd()
                    }
                }
                var all: [String] = []
                for await answer in group { all.append(answer) }
                return all
            }
            let answered = answers.filter { $0.hasPrefix("HTTP/1.1 200 OK") && $0.contains("Connection: close") }
            let bodies = Set(answers.map { String($0.split(separator: "\r\n").last ?? "") })
            expectEqual(answers.count, 100)
            expectEqual(answered.count, 100, "every connection answered 200 and closed")
            expectEqual(bodies.count, 100, "each answer is its own request's")
        }
    }

    /// Over the limit, a new connection is answered 503 only when every open one is being answered. The
    /// handlers answer when the test lets them, and the test waits until both run — no pause whose length
    /// a loaded machine could outlast.
    @Test func oneConnectionOverTheLimitWhileAllAreAnsweredIsAnswered503() async throws {
        let running = Mutex(0)
        let released = Mutex(false)
        let held: HTTPServer.Handler = { _ in
            running.withLock { $0 += 1 }
            for _ in 0..<30_000 where !released.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(10)) }
            return .text(200, "held")
        }
        try await serving(HTTPServerLimits(requestTimeout: .seconds(600), idleTimeout: .seconds(600), connections: 2), handler: held) { server in
            let first = try #require(await RawConnection.open(port: server.port))
            let second = try #require(await RawConnection.open(port: server.port))
            first.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            second.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            // A suite that keeps both task threads busy can hold a handler back for minutes: wait for it.
            for _ in 0..<30_000 where running.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
            expectEqual(running.withLock { $0 }, 2, "both handlers run")
            let third = try #require(await RawConnection.open(port: server.port))
            #expect(await third.readToEnd().hasPrefix("HTTP/1.1 503 Service Unavailable"))
            released.withLock { $0 = true }
            await expectEqual(first.readAnswers(1).first?.hasSuffix("held"), true, "the answers in progress are not cut")
        }
    }

    /// Idle connections and slow ones (slowloris: a request trickling in) filling every slot do not shut a
    /// client out: the quietest is closed to make room, and the new client is answered at once — not after
    /// the ten-minute timeouts, and not with a 503.
    @Test(arguments: ["", "GET / HTTP/1.1\r\nHost: x\r\nX-Slow: "])
    func idleOrSlowConnectionsMakeRoomForANewClient(opening: String) async throws {
        try await serving(HTTPServerLimits(requestTimeout: .seconds(600), idleTimeout: .seconds(600), connections: 16)) { server in
            var hogs: [RawConnection] = []
            for _ in 0..<16 {
                let hog = try #require(await RawConnection.open(port: server.port))
                if !opening.isEmpty { hog.send(opening) }
                hogs.append(hog)
            }
            try await Task.sleep(for: .milliseconds(200))
            for hog in hogs where !opening.isEmpty { hog.send("a") }  // still trickling, more recently than the first byte
            let started = ContinuousClock.now
            let client = try #require(await RawConnection.open(port: server.port))
            client.send("GET /fresh HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            let answer = await client.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 200 OK") && answer.hasSuffix("GET /fresh 0"), "\(answer.prefix(60))")
            // Milliseconds on a quiet machine. The bound is half the timeouts the client would wait out without
            // the room made: far from both (a loaded machine has stalled the whole test process for 38 s).
            #expect(ContinuousClock.now - started < .seconds(300))
            #expect(server.openConnections <= 16)
        }
    }

    @Test func shutdownLetsAnAnswerInProgressFinishAndClosesIdleConnections() async throws {
        let answering = Mutex(false)
        let server = try HTTPServer(limits: HTTPServerLimits(requestTimeout: .seconds(600), idleTimeout: .seconds(600), shutdownGrace: .seconds(600))) { _ in
            answering.withLock { $0 = true }
            try? await Task.sleep(for: .milliseconds(300))
            return .text(200, "late but whole")
        }
        let idle = try #require(await RawConnection.open(port: server.port))
        let busy = try #require(await RawConnection.open(port: server.port))
        busy.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        // The answer is in progress (on a busy machine the request may take a while to be read).
        for _ in 0..<60_000 where !answering.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        let started = ContinuousClock.now
        await server.shutdown()
        // The 300 ms answer, not the ten-minute grace (the bound is half of it: far from both).
        #expect(ContinuousClock.now - started < .seconds(300), "well within the grace")
        let answer = await busy.readToEnd()
        #expect(answer.hasSuffix("late but whole"), "got: \(answer)")
        #expect(answer.contains("Connection: close"), "no keep-alive once stopping")
        await expectEqual(idle.readToEnd(), "")
        #expect(await RawConnection.open(port: server.port) == nil, "no longer listening")
    }

    @Test func aHandlerThatNeverAnswersIsCancelledAfterTheGrace() async throws {
        let answering = Mutex(false)
        let server = try HTTPServer(limits: HTTPServerLimits(requestTimeout: .seconds(600), idleTimeout: .seconds(600), shutdownGrace: .milliseconds(200))) { _ in
            answering.withLock { $0 = true }
            try? await Task.sleep(for: .seconds(3600))
            return .text(200, Task.isCancelled ? "cancelled" : "slept")
        }
        let busy = try #require(await RawConnection.open(port: server.port))
        busy.send("GET / HTTP/1.1\r\nHost: x\r\n\r\n")
        for _ in 0..<60_000 where !answering.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
        let started = ContinuousClock.now
        await server.shutdown()
        #expect(ContinuousClock.now - started < .seconds(1800), "the grace, not the handler's hour (the bound is half of it)")
        #expect(await busy.readToEnd().hasSuffix("cancelled"))
    }

    @Test func curlReusesTheConnection() async throws {
        try await serving { server in
            let url = server.url
            let (status, body, trace) = try await offPool { () throws -> (Int32, String, String) in
                let curl = try ChildProcess.run("/usr/bin/curl", ["-sv", "\(url)/one", "\(url)/two", "-d", "x=1"])
                let body = String(decoding: curl.output, as: UTF8.self)
                let trace = String(decoding: curl.errors, as: UTF8.self)
                return (curl.termination.status, body, trace)
            }
            expectEqual(status, 0)
            expectEqual(body, "POST /one 3POST /two 3")
            #expect(trace.contains("Re-using existing connection") || trace.contains("Reusing existing"), "keep-alive: \(trace)")
        }
    }

    /// An answer that ends in a TCP reset arrives cut short, and the reset leaves closing the socket to
    /// the connection's owner: closed twice, the number could already belong to another socket of the
    /// process (the fleet harness saw its own client sockets closed and made non-blocking under it).
    @Test func aResetAnswerIsCutShortAndItsSocketClosedOnce() async throws {
        let reset: HTTPServer.Handler = { _ in HTTPResponse(status: 503, body: Array(repeating: 65, count: 100), ending: .resetMidBody(bodyBytes: 10)) }
        try await serving(handler: reset) { server in
            let connection = try #require(await RawConnection.open(port: server.port))
            connection.send("GET /x HTTP/1.1\r\nHost: h\r\n\r\n")
            let answer = await connection.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 503"))
            #expect(!answer.contains(String(repeating: "A", count: 11)), "the body is cut after 10 bytes: \(answer)")
        }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        try #require(fd >= 0)
        Socket.resetOnClose(fd)
        #expect(fcntl(fd, F_GETFD) != -1, "still open: its owner closes it, once")
        expectEqual(close(fd), 0)
    }
}

/// `entitle serve` with almost no descriptors left (a process limit of 48): connections beyond what it
/// can hold do not make its accept loop spin, a new client is still answered at once, and SIGTERM
/// stops it (exit 0).
@Suite("The server out of descriptors")
struct DescriptorExhaustionTests {
    @Test func theAcceptLoopBacksOffAndANewClientIsStillServed() async throws {
        let entitle = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("entitle").path
        let log = NSTemporaryDirectory() + "entitle-serve-fds-" + UUID().uuidString + ".log"
        defer { try? FileManager.default.removeItem(atPath: log) }
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        let server = try ChildProcess.spawn("/bin/sh", ["-c", "ulimit -n 48 && exec '\(entitle)' serve --port 0"], output: .file(log))
        // Killed and reaped on a thread of its own: a defer cannot await.
        defer {
            server.send(SIGKILL)
            OwnThread.start { _ = server.waitForExit() }
        }
        var port: UInt16?
        for _ in 0..<300 where port == nil {
            try await Task.sleep(for: .milliseconds(100))
            let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
            port = text.split(separator: "\n").first.flatMap { $0.split(separator: ":").last }.flatMap { UInt16($0) }
        }
        let listening = try #require(port)
        var hogs: [RawConnection] = []
        for _ in 0..<80 {
            if let hog = await RawConnection.open(port: listening) { hogs.append(hog) }
        }
        try await Task.sleep(for: .milliseconds(300))
        let before = try Self.cpuTicks(server.pid)
        try await Task.sleep(for: .seconds(1))
        let spent = try Self.cpuTicks(server.pid) - before
        #expect(spent < 30, "\(spent) ticks of CPU in one second with every descriptor taken (a spinning loop takes ~100)")
        let started = ContinuousClock.now
        let client = try #require(await RawConnection.open(port: listening))
        client.send("GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        let answer = await client.readToEnd()
        #expect(answer.hasPrefix("HTTP/1.1 200 OK"), "\(answer.prefix(80))")
        // Milliseconds when quiet; a fraction of the 30 s idle timeout that would otherwise make room.
        #expect(ContinuousClock.now - started < .seconds(10))
        // Half the hogs sent half a request; out of descriptors, SIGTERM still stops the server.
        for (index, hog) in hogs.enumerated() where index % 2 == 0 { hog.send("GET / HTTP/1.1\r\nHost: x\r\n") }
        server.send(SIGTERM)
        let exited = await server.waitForExit(upTo: .seconds(60))
        #expect(exited && server.termination == .exited(0), "SIGTERM out of descriptors: \(String(describing: server.termination))")
        _ = hogs
    }

    /// User plus system CPU time of process `pid`, in clock ticks (`/proc/PID/stat`).
    static func cpuTicks(_ pid: Int32) throws -> Int {
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat[stat.range(of: ")")!.upperBound...].split(separator: " ")
        return (Int(fields[11]) ?? 0) + (Int(fields[12]) ?? 0)
    }
}
