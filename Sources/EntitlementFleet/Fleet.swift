import EntitlementEngine
import EntitlementHTTPServer
import EntitlementRedis
import EntitlementSimulator
import EntitlementSimulatorServer
import EntitlementSupport
import Foundation
import Synchronization

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif
#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The processes and the simulator of one run.
final class Fleet: Sendable {
    let redis: any FleetRedis
    let simulator: Simulator
    let adobeURL: String
    let nodeCount: Int
    private let server: HTTPServer
    /// The TLS front the nodes reach the simulator through (`--tls`), if any.
    private let front: TLSTerminator?
    private let adobeFault = Mutex<(mode: AdobeMode, until: ContinuousClock.Instant)>((.normal, .now))
    private let nodes: Mutex<[NodeProcess]>
    private let folder: String

    enum AdobeMode { case normal, refusing, hanging }

    /// What a node answered: its callback lines, or why there were none.
    struct Answer: Sendable {
        var lines: [String] = []
        var problem: String?
        var elapsed: Duration = .zero

        /// The registration code of a `status(REGCODE)` (a TV's second-screen login), if any.
        var registrationCode: String? {
            value(of: "status").flatMap { $0.hasPrefix("REGCODE ") ? String($0.dropFirst(8)) : nil }
        }

        /// The detail of the first callback named `name`.
        func value(of name: String) -> String? {
            lines.first { $0.hasPrefix(name + "\t") }.map { String($0.split(separator: "\t", omittingEmptySubsequences: false)[1]) }
        }

        /// The code of the last answer that failed (`status`, `tokenRequestFailed`), or `setAuthenticationStatus`'s.
        var failure: String? {
            if let problem { return problem }
            for line in lines.reversed() {
                let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
                switch fields[0] {
                case "status" where fields[1].hasPrefix("REGCODE "): return "REGCODE"  // the code stays off reports
                case "status", "tokenRequestFailed": return fields[1]
                case "setAuthenticationStatus": return fields[1].hasPrefix("1") ? "1" : String(fields[1].dropFirst(2))
                default: continue
                }
            }
            return nil
        }
    }

    private init(
        redis: any FleetRedis, simulator: Simulator, server: HTTPServer, front: TLSTerminator?, adobeURL: String, nodes: [NodeProcess],
        folder: String
    ) {
        self.redis = redis
        self.simulator = simulator
        self.server = server
        self.front = front
        self.adobeURL = adobeURL
        self.nodeCount = nodes.count
        self.nodes = Mutex(nodes)
        self.folder = folder
    }

    /// Starts Redis, the simulator and `count` nodes; with `tls` (a folder with `server.crt` and
    /// `server.key`), the nodes reach the simulator over TLS, through stunnel.
    /// The programmer's authorization service the `pin-…` devices authorize through: it grants
    /// ``protectedResource`` once a step-up with ``pin`` approved a transaction.
    static let stepUpServer: SimulatedWorld.ChainProvider = {
        var server = SimulatedWorld.ChainProvider(id: "kids", grants: [protectedResource])
        server.kind = .server
        server.pin = pin
        server.pinProtected = [protectedResource]
        return server
    }()
    /// The direct subscription (Pugpig's Security API, renewing and replacing tokens) the `sub-…` devices
    /// sign in to, and its readers: one per device (`sub-N` signs in as reader N), each entitled to every issue.
    static let subscription: SimulatedWorld.ChainProvider = {
        var provider = SimulatedWorld.ChainProvider(id: "magazine")
        provider.kind = .subscription
        provider.renews = true
        return provider
    }()
    static let readers = 4096
    static let issues = 1000
    static func reader(_ index: Int) -> String { "reader-\(index)" }
    static func readerPassword(_ index: Int) -> String { "pw-\(index)-\(index &* 7919 % 10007)" }

    /// The resource a PIN protects, and the PIN.
    static let protectedResource = "horror-1"
    static let pin = "4321"

    static func start(nodes count: Int, folder: String, cluster: Bool, tls: String?) async throws -> Fleet {
        let redis: any FleetRedis = cluster ? try await RedisClusterProcess.start(folder: folder) : try await RedisProcess.start(folder: folder)
        var world = SimulatedWorld.default
        world.chainProviders.append(Self.stepUpServer)
        world.chainProviders.append(Self.subscription)
        world.subscribers += (0..<Self.readers).map {
            SimulatedWorld.Subscriber(
                username: Self.reader($0), password: Self.readerPassword($0), providerID: Self.subscription.id,
                issues: Set((1...Self.issues).map { "issue-\($0)" }))
        }
        let simulator = Simulator(world: world, clock: SystemClock(), seed: 7)
        let service = SimulatedV2Service(simulator: simulator, throttles: false)
        let listener = try HTTPListener()
        let app = SimulatorHTTPApp(service: service, baseURL: listener.url)
        let box = Mutex<Fleet?>(nil)
        let server = try HTTPServer(listener: listener, limits: HTTPServerLimits(shutdownGrace: .milliseconds(200))) { request in
            if let fleet = box.withLock({ $0 }) { return await fleet.serveAdobe(request, app) }
            return await app.respond(request)
        }
        let front = try tls.map { certificates throws in
            try TLSTerminator(certificates: certificates, target: listener.port, port: try freePort(), folder: folder)
        }
        let adobeURL = front.map { "https://localhost:\($0.port)" } ?? listener.url
        var nodes: [NodeProcess] = []
        for number in 0..<count {
            nodes.append(try await NodeProcess.start(number: number, redis: redis, adobe: adobeURL, folder: folder))
        }
        let fleet = Fleet(redis: redis, simulator: simulator, server: server, front: front, adobeURL: adobeURL, nodes: nodes, folder: folder)
        box.withLock { $0 = fleet }
        return fleet
    }

    private func serveAdobe(_ request: HTTPRequest, _ app: SimulatorHTTPApp) async -> HTTPResponse {
        let (mode, until) = adobeFault.withLock { ($0.mode, $0.until) }
        if ContinuousClock.now < until {
            switch mode {
            case .refusing: return HTTPResponse(status: 503, ending: .resetMidBody(bodyBytes: 0))
            case .hanging: try? await Task.sleep(until: until)
            case .normal: break
            }
        }
        return await app.respond(request)
    }

    func adobe(_ mode: AdobeMode, for duration: Duration) async {
        adobeFault.withLock { $0 = (mode, .now + duration) }
        try? await Task.sleep(for: duration)
    }

    /// Sends `call` for `device` to node `number` (60 s at most: more is a hung request).
    func send(_ call: String, device: String, to number: Int, untilAnswered: Bool = false) async -> Answer {
        let node = nodes.withLock { $0[number] }
        let started = ContinuousClock.now
        var answer = Answer()
        let path = "/devices/\(device)/call" + (untilAnswered ? "?until=answered" : "")
        switch await FleetHTTPClient.post(port: node.port, path: path, body: Array(call.utf8)) {
        case .answered(200, let body): answer.lines = String(decoding: body, as: UTF8.self).split(separator: "\n").map(String.init)
        case .answered(let status, _): answer.problem = "node HTTP \(status)"
        case .unreachable: answer.problem = "node unreachable"
        case .broken(let error): answer.problem = "connection broken (errno \(error))"
        case .hung: answer.problem = "hung"
        }
        answer.elapsed = ContinuousClock.now - started
        return answer
    }

    func killAndRestart(node number: Int) async {
        let old = nodes.withLock { $0[number] }
        await old.kill()
        try? await Task.sleep(for: .milliseconds(300))
        if let fresh = try? await NodeProcess.start(number: number, redis: redis, adobe: adobeURL, folder: folder, port: old.port) {
            nodes.withLock { $0[number] = fresh }
        }
    }

    /// Every fault over: Redis and the simulator answer, every node is up.
    func heal() async {
        adobeFault.withLock { $0 = (.normal, .now) }
        redis.resume()
    }

    /// The nodes that ended with nothing of the harness ending them (a crash), each with how it ended and
    /// the crash report's first lines from its standard error.
    func nodesThatDied() -> [String] {
        nodes.withLock { $0 }.enumerated().compactMap { number, node in
            guard let ending = node.endedOnItsOwn else { return nil }
            return "node \(number) ended on its own (\(ending)): \(Self.crashSummary(node.errors)) (whole report: \(node.errors))"
        }
    }

    /// What a node's crash report says crashed, and where.
    private static func crashSummary(_ path: String) -> String {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return "no report" }
        return CrashReport.summary(text)
    }

    /// SIGTERM to every node; the numbers of those that did not exit within 30 s (then killed).
    func stopNodes() async -> [Int] {
        let all = nodes.withLock { $0 }
        var stuck: [Int] = []
        for (number, node) in all.enumerated() where !(await node.terminate(upTo: .seconds(30))) {
            stuck.append(number)
            await node.kill()
        }
        return stuck
    }

    /// Kills whatever still runs: the nodes, Redis, the TLS front, the simulator's server.
    func stop() async {
        for node in nodes.withLock({ $0 }) { await node.kill() }
        await redis.stop()
        front?.stop()
        await server.shutdown()
    }
}
