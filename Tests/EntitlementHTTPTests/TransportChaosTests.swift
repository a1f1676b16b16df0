import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSupport
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// `HTTPV2Transport` on its libcurl stack — the platform default on Linux, chosen because
/// FoundationNetworking's `URLSession` is reported to crash in its multi handle's Dispatch sources on
/// connection teardown, cancellation and timeouts (`ENTITLE_CHAOS_STACK=urlSession` runs the same on
/// `URLSession`, by hand) — under thousands of exchanges
/// from 24 tasks against a server that answers, resets mid-body, hangs past the deadline, throttles,
/// answers slowly or too much, while a fifth of the exchanges are cancelled at a random moment. Over
/// TLS (stunnel in front, killed and started again during the run, tearing every connection down at
/// once) when `.ci/run` has made a certificate the system trusts, and over plain HTTP always. The
/// process surviving is the first verdict; then every exchange ended with an answer or a typed error,
/// and the transport still works afterwards.
@Suite("The V2 transport under connection chaos")
struct TransportChaosTests {
    static let tlsFolder = TLSTerminator.certificatesFromEnvironment()
    static var tlsRequired: Bool { ProcessInfo.processInfo.environment["ENTITLE_REQUIRE_TLS"] == "1" }
    /// Tasks sending at once: enough to tear connections down under each other, few enough that the
    /// rest of a parallel `swift test` on two cores is not starved.
    static let workers = 24
    /// Exchanges per run (`ENTITLE_CHAOS_EXCHANGES` for a longer one).
    static let exchanges = Int(ProcessInfo.processInfo.environment["ENTITLE_CHAOS_EXCHANGES"] ?? "") ?? 2_048
    /// The stack under test (`ENTITLE_CHAOS_STACK=urlSession` for `URLSession`).
    static let stack: HTTPStack = ProcessInfo.processInfo.environment["ENTITLE_CHAOS_STACK"] == "urlSession" ? .urlSession : .libcurl

    /// What the exchanges ended with.
    final class Tally: Sendable {
        let outcomes = Mutex<[String: Int]>([:])
        func add(_ outcome: String) { outcomes.withLock { $0[outcome, default: 0] += 1 } }
        var total: Int { outcomes.withLock { $0.values.reduce(0, +) } }
    }

    /// A server whose answers follow a fixed mix of faults (a seeded sequence).
    static func chaoticServer() throws -> HTTPServer {
        let draws = Mutex<UInt64>(0x9E37_79B9_7F4A_7C15)
        let body = Array(#"{"requestor":{"mvpds":[]}}"#.utf8)
        let tooLarge = [UInt8](repeating: 0x20, count: 64 * 1024)
        var json = HTTPHeaders()
        json.add("Content-Type", "application/json")
        let headers = json
        return try HTTPServer(listener: try HTTPListener(), limits: HTTPServerLimits(shutdownGrace: .milliseconds(100))) { request in
            if request.path.contains("/steady/") { return HTTPResponse(status: 200, headers: headers, body: body) }
            let draw = draws.withLock { state -> UInt64 in
                state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                return state >> 33
            }
            switch draw % 100 {
            case 0..<40: return HTTPResponse(status: 200, headers: headers, body: body)
            case 40..<55: return HTTPResponse(status: 200, headers: headers, body: body, ending: .resetMidBody(bodyBytes: Int(draw % 20)))
            case 55..<65:
                try? await Task.sleep(for: .milliseconds(1_500 + Int(draw % 1_000)))  // past the client's deadline
                return HTTPResponse(status: 200, headers: headers, body: body)
            case 65..<75: return .html(429, "<html>429 Too Many Requests</html>")
            case 75..<90:
                try? await Task.sleep(for: .milliseconds(Int(draw % 300)))
                return HTTPResponse(status: 200, headers: headers, body: body)
            default: return HTTPResponse(status: 200, headers: headers, body: tooLarge)
            }
        }
    }

    /// Runs the exchanges through `transport`, `restarting` the TLS front a few times meanwhile.
    static func chaos(_ transport: HTTPV2Transport, restarting front: TLSTerminator?) async -> Tally {
        let tally = Tally()
        let workers = Self.workers
        await withTaskGroup(of: Void.self) { group in
            if let front {
                group.addTask {
                    for _ in 0..<3 {
                        for _ in 0..<40 where tally.total < exchanges { try? await Task.sleep(for: .milliseconds(100)) }
                        // stunnel starts on a thread of its own: never block one of the suite's task threads.
                        _ = await OwnThread.run { (try? front.restart()) != nil }
                    }
                }
            }
            for worker in 0..<workers {
                group.addTask {
                    var generator = SplitMix64(seed: UInt64(worker))
                    for index in 0..<(exchanges / workers) {
                        let context = V2RequestContext(deviceID: "device-\(worker)-\(index)", forwardedFor: "10.0.\(worker).\(index % 250)")
                        let exchange = Task {
                            do throws(BackendError) {
                                tally.add("status \(try await transport.send(.configuration(serviceProvider: "sp"), context: context).status)")
                            } catch {
                                tally.add(error.code.description)
                            }
                        }
                        if generator.next() % 5 == 0 {
                            try? await Task.sleep(for: .milliseconds(Int(generator.next() % 200)))
                            exchange.cancel()
                        }
                        await exchange.value
                    }
                }
            }
        }
        return tally
    }

    /// The same transport answers a steady request after the chaos (its pool is not wedged): one of ten
    /// tries, each within the transport's deadline, so a loaded machine still passes.
    static func expectStillWorks(_ transport: HTTPV2Transport) async {
        var outcomes: [String] = []
        for _ in 0..<10 {
            do throws(BackendError) {
                let answer = try await transport.send(.configuration(serviceProvider: "steady"), context: V2RequestContext(deviceID: "after"))
                if answer.status == 200 { return }
                outcomes.append("status \(answer.status)")
            } catch {
                outcomes.append(error.code.description)
            }
        }
        Issue.record("no steady answer after the chaos: \(outcomes)")
    }

    static func expectEveryExchangeEnded(_ tally: Tally, _ run: String) {
        let outcomes = tally.outcomes.withLock { $0 }
        print("transport chaos \(run): \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))")
        expectEqual(tally.total, exchanges / workers * workers, "every exchange ended: \(outcomes)")
        let known: Set<String> = ["status 200", "status 429", "status 503", "timeout", "network"]
        #expect(Set(outcomes.keys).isSubset(of: known), "only answers and typed failures: \(outcomes)")
    }

    @Test func overTLSWithTheFrontKilledMidRun() async throws {
        guard let certificates = Self.tlsFolder else {
            #expect(!Self.tlsRequired, "ENTITLE_REQUIRE_TLS is set but ENTITLE_TLS_DIR has no certificate, or stunnel4 is missing")
            return
        }
        let server = try Self.chaoticServer()
        let folder = ScratchSpace.path("entitle-chaos-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let port = try HTTPListener().port  // free a moment ago (the listener closes as it goes)
        let started = await OwnThread.run { Result { () throws(ChildProcessError) in try TLSTerminator(certificates: certificates, target: server.port, port: port, folder: folder) } }
        let front = try started.get()
        let baseURL = "https://localhost:\(port)"
        let transport = HTTPV2Transport(
            baseURL: baseURL, timeout: .seconds(1), pacing: .afterThrottleOnly, bodyLimit: 16 * 1024, connectionsPerHost: 32, stack: Self.stack)
        try #require(transport.stack == Self.stack, "the transport runs on \(transport.stack), not \(Self.stack)")
        let tally = await Self.chaos(transport, restarting: front)
        Self.expectEveryExchangeEnded(tally, "on \(transport.stack) over TLS, the front killed 3 times")
        await Self.expectStillWorks(transport)
        await OwnThread.run { front.stop() }
        await server.shutdown()
    }

    @Test func overPlainHTTP() async throws {
        let server = try Self.chaoticServer()
        let transport = HTTPV2Transport(
            baseURL: server.url, timeout: .seconds(1), pacing: .afterThrottleOnly, bodyLimit: 16 * 1024, connectionsPerHost: 32, stack: Self.stack)
        try #require(transport.stack == Self.stack, "the transport runs on \(transport.stack), not \(Self.stack)")
        let tally = await Self.chaos(transport, restarting: nil)
        Self.expectEveryExchangeEnded(tally, "on \(transport.stack) over plain HTTP")
        await Self.expectStillWorks(transport)
        await server.shutdown()
    }
}
