import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementProviders
import EntitlementSimulator
import EntitlementSimulatorServer
import Synchronization
import EntitlementTestSupport
import Testing

/// The transport itself, on each of its stacks: the decoration hook, cancellation, and logs without secrets.
@Suite("The HTTP transport")
struct HTTPV2TransportTests {
    /// A loopback exchange's timeout where only a hang fails a test: the transport's default 30 s was
    /// outlasted by a slow machine under the whole suite.
    static let patience = Duration.seconds(600)

    /// Every request a server received.
    final class Captured: Sendable {
        private let requests = Mutex<[HTTPRequest]>([])
        func add(_ request: HTTPRequest) { requests.withLock { $0.append(request) } }
        var all: [HTTPRequest] { requests.withLock { $0 } }

        /// A server on loopback that keeps every request here and answers each `200 {}`.
        func answeringEmptyJSON() throws -> HTTPServer {
            try HTTPServer { request in
                self.add(request)
                return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{}".utf8))
            }
        }
    }

    @Test(arguments: HTTPFaultTests.stacks)
    func theDecorationHookSeesEveryRequestLastAndMayAddOrChangeHeaders(stack: HTTPStack) async throws {
        let captured = Captured()
        let server = try captured.answeringEmptyJSON()
        let seen = Mutex<[String]>([])
        let transport = HTTPV2Transport(baseURL: server.url, timeout: Self.patience, stack: stack, decorate: { request in
            seen.withLock { $0.append(request.operation) }
            request.headers["X-Gateway-Key"] = "gateway-1"
            request.headers["Accept"] = "application/json;charset=utf-8"
        })
        let answer = try await transport.send(
            .configuration(serviceProvider: "sim-requestor"), context: V2RequestContext(bearer: "b", deviceID: "tv"))
        expectEqual(answer.status, 200)
        expectEqual(answer.body, .object([:]))
        let request = try #require(captured.all.first)
        expectEqual(request.headers["X-Gateway-Key"], "gateway-1")
        expectEqual(request.headers["Accept"], "application/json;charset=utf-8")
        expectEqual(request.headers["Authorization"], "Bearer b", "the documented headers are there before the hook runs")
        expectEqual(seen.withLock { $0 }, ["configuration"])
        await server.shutdown()
    }

    /// A trailing closure is the exchange log, as one expects of `HTTPV2Transport(baseURL:) { … }`;
    /// the request hook is named `decorate:` whenever it is given.
    @Test func aTrailingClosureIsTheLog() async throws {
        let server = try HTTPServer { _ in
            HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{}".utf8))
        }
        let logged = Mutex<[String]>([])
        let transport = HTTPV2Transport(baseURL: server.url, timeout: Self.patience) { exchange in logged.withLock { $0.append(exchange.operation) } }
        _ = try await transport.send(.configuration(serviceProvider: "sim-requestor"), context: V2RequestContext(deviceID: "tv"))
        expectEqual(logged.withLock { $0 }, ["configuration"])
        await server.shutdown()
    }

    /// An answer may hold any JSON number (a field Adobe adds tomorrow with a fraction): it is read, not
    /// refused; bytes that are not UTF-8 are a body problem, not a repaired guess.
    @Test(arguments: HTTPFaultTests.stacks)
    func anAnswerWithAFractionIsReadAndOneThatIsNotUTF8IsNot(stack: HTTPStack) async throws {
        let server = try HTTPServer { request in
            let body: [UInt8] = request.path.hasSuffix("/configuration")
                ? Array(#"{"weight":0.5,"scale":1e3,"big":123456789012345678901234567890,"requestor":"sp"}"#.utf8)
                : [0x7B, 0x22, 0x61, 0x22, 0x3A, 0x22, 0xFF, 0x22, 0x7D]
            return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: body)
        }
        let transport = HTTPV2Transport(baseURL: server.url, timeout: Self.patience, stack: stack)
        let answer = try await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext(bearer: "b"))
        #expect(answer.body?["weight"]?.double == 0.5 && answer.body?["scale"]?.double == 1000)
        expectEqual(answer.body?["big"], .number(try #require(JSONNumber("123456789012345678901234567890"))))
        expectEqual(answer.body?["requestor"], "sp")
        let broken = try await transport.send(.profiles(serviceProvider: "sp"), context: V2RequestContext(bearer: "b", deviceID: "tv"))
        #expect(broken.body == nil && broken.bodyProblem != nil)
        await server.shutdown()
    }

    @Test(arguments: HTTPFaultTests.stacks)
    func aBodyOverTheLimitIsNotReadAndARedirectIsNotFollowed(stack: HTTPStack) async throws {
        let elsewhere = Captured()
        let other = try HTTPServer { request in
            elsewhere.add(request)
            return .text(200, "should not be reached")
        }
        let server = try HTTPServer { request in
            if request.path.hasSuffix("/configuration") {
                let huge = "{\"x\":\"" + String(repeating: "a", count: 2 * 1024 * 1024) + "\"}"
                return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(huge.utf8))
            }
            return .redirect(other.url + "/steal")
        }
        let transport = HTTPV2Transport(baseURL: server.url, timeout: Self.patience, stack: stack)
        let big = try await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext(bearer: "b"))
        expectEqual(big.status, 200)
        #expect(big.body == nil)
        expectEqual(big.bodyProblem, "the body is larger than 1048576 bytes")
        let moved = try await transport.send(.profiles(serviceProvider: "sp"), context: V2RequestContext(bearer: "b", deviceID: "tv"))
        expectEqual(moved.status, 302)
        #expect(elsewhere.all.isEmpty, "the bearer token never went to the redirect's target")
        await server.shutdown()
        await other.shutdown()
    }

    @Test(arguments: HTTPFaultTests.stacks)
    func cancellingTheCallingTaskCancelsTheRequest(stack: HTTPStack) async throws {
        let server = try HTTPServer(limits: HTTPServerLimits(shutdownGrace: .milliseconds(100))) { _ in
            try? await Task.sleep(for: .seconds(900))
            return .text(200, "late")
        }
        // The deadline is far from anything a loaded machine takes: the error says the cancel ended it.
        let transport = HTTPV2Transport(baseURL: server.url, timeout: .seconds(600), stack: stack)
        let started = ContinuousClock.now
        let sending = Task { () async throws(BackendError) -> V2Response in
            try await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext())
        }
        try await Task.sleep(for: .milliseconds(300))
        sending.cancel()
        let result = await sending.result
        #expect(ContinuousClock.now - started < .seconds(300), "not the 600 s timeout")
        guard case .failure(let error) = result else {
            Issue.record("the request went on: \(result)")
            return
        }
        expectEqual(error as? BackendError, .network("cancelled"))
        await server.shutdown()
    }

    /// On Linux the transports run on libcurl unless told otherwise (FoundationNetworking's `URLSession`
    /// crashes in libdispatch under connection faults); on Apple's systems on `URLSession`; and each
    /// runs on the stack asked for.
    @Test func eachTransportRunsOnThePlatformsStackOrTheOneAskedFor() {
        #if canImport(FoundationNetworking)
            expectEqual(HTTPStack.platformDefault, .libcurl)
            #expect(CurlExchanges.unavailable == nil, "libcurl could not be opened: \(CurlExchanges.unavailable ?? "")")
        #else
            expectEqual(HTTPStack.platformDefault, .urlSession)
        #endif
        expectEqual(HTTPV2Transport(baseURL: "http://127.0.0.1:1").stack, .platformDefault)
        expectEqual(HTTPProviderTransport().stack, .platformDefault)
        for stack in HTTPFaultTests.stacks {
            expectEqual(HTTPV2Transport(baseURL: "http://127.0.0.1:1", stack: stack).stack, stack)
            expectEqual(HTTPProviderTransport(stack: stack).stack, stack)
        }
    }

    /// A header the hook made that could end its line (CR, LF, NUL) or is not a field name is refused
    /// before anything is sent: curl would write such a line as it is, injecting a header or a request.
    @Test(arguments: HTTPFaultTests.stacks)
    func aHeaderThatCouldEndItsLineIsRefusedUnsent(stack: HTTPStack) async throws {
        let captured = Captured()
        let server = try captured.answeringEmptyJSON()
        let forged: [(String, String)] = [
            ("X-Note", "a\r\nX-Injected: 1"), ("X-Note", "a\nb"), ("X-Note", "a\u{0}b"), ("X Note", "a"), ("X-Note:", "a"), ("", "a"),
        ]
        for (name, value) in forged {
            let transport = HTTPV2Transport(baseURL: server.url, timeout: Self.patience, stack: stack, decorate: { $0.headers[name] = value })
            await #expect(throws: BackendError.network("a header field is not valid")) {
                _ = try await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext())
            }
        }
        #expect(captured.all.isEmpty, "nothing was sent: \(captured.all.map(\.path))")
        await server.shutdown()
    }

    final class Measurements: EngineMetricsHandler {
        let timers = Mutex<[String: [Int64]]>([:])
        let gauges = Mutex<[String: [Int64]]>([:])
        static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
            ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " ")
        }
        func increment(counter label: String, dimensions: [(String, String)], by amount: Int64) {}
        func record(timer label: String, dimensions: [(String, String)], nanoseconds: Int64) {
            timers.withLock { $0[Self.key(label, dimensions), default: []].append(nanoseconds) }
        }
        func record(gauge label: String, dimensions: [(String, String)], value: Int64) {
            gauges.withLock { $0[Self.key(label, dimensions), default: []].append(value) }
        }
    }

    /// "Is Adobe slow, or are we queueing?": with one connection and a service that takes 300 ms, three
    /// requests at once are each served in about 300 ms, and the later ones are seen waiting for the
    /// connection — in the log records and in the metrics — not as a slower service.
    @Test func queueingForAConnectionIsToldApartFromTheServicesTime() async throws {
        let server = try HTTPServer { _ in
            try? await Task.sleep(for: .milliseconds(300))
            return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{}".utf8))
        }
        let records = Mutex<[V2Exchange]>([])
        let measurements = Measurements()
        let transport = HTTPV2Transport(
            baseURL: server.url, timeout: Self.patience, pacing: .afterThrottleOnly, connectionsPerHost: 1, metrics: measurements,
            log: { record in records.withLock { $0.append(record) } })
        expectEqual(transport.connectionsPerHost, 1)
        await withTaskGroup(of: Void.self) { group in
            for device in ["tv-1", "tv-2", "tv-3"] {
                group.addTask { _ = try? await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext(deviceID: device)) }
            }
        }
        let ended = records.withLock { $0 }.sorted { $0.connectionWait < $1.connectionWait }
        expectEqual(ended.count, 3)
        #expect(ended.allSatisfy { $0.outcome == .status(200) && $0.operation == "configuration" && $0.level == .debug })
        #expect(ended.allSatisfy { $0.service >= .milliseconds(250) }, "\(ended)")
        #expect(ended[0].connectionWait * 2 < ended[2].connectionWait, "\(ended)")
        #expect(ended[2].connectionWait >= .milliseconds(500), "the third waited for two answers: \(ended)")
        #expect(ended.allSatisfy { $0.session.hasPrefix("dev-") && !$0.description.contains("tv-") }, "devices by pseudonym: \(ended)")
        #expect(ended[2].description.contains("connection \(ended[2].connectionWait.milliseconds) ms"), "\(ended[2].description)")
        let timers = measurements.timers.withLock { $0 }
        for label in ["entitle.transport.pacing", "entitle.transport.connection_wait", "entitle.transport.service"] {
            expectEqual(timers[label + " operation=configuration outcome=200"]?.count, 3, "\(label): \(timers.keys)")
        }
        let gauges = measurements.gauges.withLock { $0 }
        expectEqual(gauges["entitle.transport.connections_per_host"], [1])
        expectEqual(gauges["entitle.transport.waiting"]?.contains { $0 >= 1 }, true, "the line was reported: \(gauges)")
        expectEqual(gauges["entitle.transport.running"]?.allSatisfy { $0 <= 1 }, true, "never more than the limit: \(gauges)")
        await server.shutdown()
    }

    /// A request waiting for a connection leaves the line when its task is cancelled (while the one
    /// holding the connection is still held by the service); the others go on.
    @Test func aCancelledWaiterLeavesTheLine() async throws {
        let held = AsyncStream<Void>.makeStream()
        let release = Mutex<CheckedContinuation<Void, Never>?>(nil)
        let server = try HTTPServer { _ in
            await withCheckedContinuation { continuation in
                release.withLock { $0 = continuation }
                held.continuation.yield()
            }
            return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array("{}".utf8))
        }
        let transport = HTTPV2Transport(baseURL: server.url, timeout: Self.patience, pacing: .afterThrottleOnly, connectionsPerHost: 1)
        let first = Task { try await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext()) }
        var heldRequests = held.stream.makeAsyncIterator()
        await heldRequests.next()  // the first request holds the only connection
        let waiting = Task { try await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext()) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        let result = await waiting.result  // ends although the connection is still held
        #expect((try? result.get()) == nil)
        release.withLock { $0 }?.resume()
        try await expectEqual(first.value.status, 200)
        let third = Task { try await transport.send(.configuration(serviceProvider: "sp"), context: V2RequestContext()) }
        await heldRequests.next()
        release.withLock { $0 }?.resume()
        try await expectEqual(third.value.status, 200, "the turn was given back")
        await server.shutdown()
    }

    @Test func itsLogLinesNeverHoldABearerTokenACodeOrAMediaToken() async throws {
        let clock = ManualClock()
        let simulator = Simulator(clock: clock, seed: 101)
        let service = SimulatedV2Service(simulator: simulator, throttles: false)
        let server = try SimulatorServer(listener: try HTTPListener(), service: service)
        let lines = Mutex<[String]>([])
        let session = SimulatedSession(
            clock: clock, simulator: simulator,
            backend: V2Client(
                transport: HTTPV2Transport(baseURL: server.url, log: { line in lines.withLock { $0.append(line.description) } }),
                softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock))
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        await session.enabler.whenIdle()
        _ = await session.logIn(as: "alice", password: "wonderland")
        await session.enabler.getAuthorization("news-channel")
        await session.enabler.whenIdle()
        let logged = lines.withLock { $0 }
        let mediaTokens = session.ledger.take().compactMap { callback -> String? in
            if case .setToken(let token, _) = callback { token } else { nil }
        }
        expectEqual(mediaTokens.count, 1)
        #expect(logged.contains { $0.hasPrefix("GET /api/v2/sim-requestor/profiles/code/") }, "\(logged)")
        let secrets = await simulator.issuedSecrets + mediaTokens
        #expect(!secrets.isEmpty)
        for line in logged {
            for secret in secrets where secret.count >= 6 {
                #expect(!line.contains(secret), "a secret in the log: \(line)")
            }
            #expect(!line.contains("access.") && !line.contains("secret."), "a credential in the log: \(line)")
        }
        await server.shutdown()
    }
}
