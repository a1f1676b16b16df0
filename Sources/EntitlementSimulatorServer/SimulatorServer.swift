import EntitlementEngine
import EntitlementHTTPServer
import EntitlementSimulator

/// `entitle serve`: the simulator as a REST API V2 server and the MVPDs' web on 127.0.0.1.
public final class SimulatorServer: Sendable {
    /// The HTTP server.
    package let http: HTTPServer
    /// The V2 service (registration, bearer check, throttling) in front of the simulator.
    package let service: SimulatedV2Service
    /// The simulator answering.
    public var simulator: Simulator { service.simulator }
    /// `http://127.0.0.1:PORT`.
    public var url: String { http.url }

    /// Serves a new simulator of `world` (its web moved under the server's URL, so a browser can
    /// log in) on `port` (0: ephemeral), on `clock`, throttled per device as V2 is.
    public convenience init(
        world: SimulatedWorld = .default, port: UInt16 = 0, clock: any EngineClock = SystemClock(), seed: UInt64 = 7,
        throttles: Bool = true, log: (@Sendable (String) -> Void)? = nil
    ) throws(HTTPServerError) {
        try self.init(world: world, port: port, clock: clock, seed: seed, throttles: throttles, limits: HTTPServerLimits(), log: log)
    }

    /// Serves a new simulator of `world` as above, within `limits`.
    package convenience init(
        world: SimulatedWorld = .default, port: UInt16 = 0, clock: any EngineClock = SystemClock(), seed: UInt64 = 7,
        throttles: Bool = true, limits: HTTPServerLimits, log: (@Sendable (String) -> Void)? = nil
    ) throws(HTTPServerError) {
        let listener = try HTTPListener(port: port)
        let simulator = Simulator(world: world.served(at: listener.url), clock: clock, seed: seed)
        try self.init(listener: listener, service: SimulatedV2Service(simulator: simulator, throttles: throttles), limits: limits, log: log)
    }

    /// Serves `service` on `listener` (its web stays at the world's own URLs: tests whose browser is
    /// in process).
    package init(
        listener: HTTPListener, service: SimulatedV2Service, limits: HTTPServerLimits = HTTPServerLimits(),
        log: (@Sendable (String) -> Void)? = nil
    ) throws(HTTPServerError) {
        let app = SimulatorHTTPApp(service: service, baseURL: listener.url)
        var accessLog: (@Sendable (HTTPAccessLogEntry) -> Void)?
        if let log {
            let minted = service.simulator.mintedSecrets
            accessLog = { entry in log(Self.accessLogLine(entry, minted: minted)) }
        }
        self.service = service
        self.http = try HTTPServer(listener: listener, limits: limits, log: accessLog) { request in await app.respond(request) }
    }

    /// An access-log line: the target with every secret the simulator minted shortened by value (in any
    /// parameter or path segment, percent-encoded or not), then by name (`Redactor.redact`).
    static func accessLogLine(_ entry: HTTPAccessLogEntry, minted: MintedSecrets) -> String {
        entry.line { target in Redactor.redact(minted.redacting(target)) }
    }

    /// Stops serving (answers in progress get the limits' grace).
    public func shutdown() async { await http.shutdown() }
}
