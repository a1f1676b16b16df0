import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSimulatorServer

/// Runs a ``Scenario`` against the real `AccessEnabler` on the simulator, with a manual clock,
/// seeded randomness and answers delivered in operation order: the same result every run.
///
/// Exhaustive, like TCA's TestStore: every callback must be expected, in order, before the next
/// `>` or `!` step and by the end of the script; a missing, extra or different callback fails
/// the run with the line, the expectation, what happened and what came just before. The run also
/// fails if any call was answered twice or by the wrong kind of callback, or (unless the script
/// says `allow pending calls`) was never answered.
public struct ScenarioRunner: Sendable {
    /// How many earlier lines a failure report shows.
    package static let contextLines = 5

    /// How the engine reaches the simulator.
    package enum Transport: Sendable, Hashable {
        /// The simulator's in-process port.
        case inProcess
        /// REST API V2's JSON in process: a `V2Client` on the simulator's `SimulatedV2Service`.
        case v2Wire
        /// REST API V2 over HTTP on loopback: a `V2Client` on `HTTPV2Transport`, talking to a
        /// `SimulatorServer` (what `entitle serve` runs) of the scenario's simulator on an ephemeral
        /// port. Injected faults happen on the socket: a reset mid-body, an answer held past the
        /// client's timeout.
        case http
    }

    /// How the engine reaches the simulator.
    package var transport: Transport

    /// When `transport` is `.http`, how long the client waits for an answer to a request the simulator
    /// times out (a `timeout` fault holds the answer for longer): what one such fault costs.
    package static let httpTimeout: Duration = .seconds(1)

    /// When `transport` is `.http`, how long the clients wait for every other answer: a deadline that
    /// only ends a hang (a loaded machine's slow answer on loopback must not fail a scenario).
    package static let httpPatience: Duration = .seconds(120)

    /// A runner; `overV2Wire` routes every backend request through V2's JSON.
    public init(overV2Wire: Bool = false) { self.transport = overV2Wire ? .v2Wire : .inProcess }

    /// A runner on `transport`.
    package init(transport: Transport) { self.transport = transport }

    /// Runs `scenario`, recording it into `recorder` when one is given (the `main` engine's first life).
    public func run(_ scenario: Scenario, recorder: (any EngineMonitor)? = nil) async -> ScenarioResult {
        let start = ContinuousClock.now
        let clock = ManualClock()
        let simulator = Simulator(world: scenario.world, clock: clock, seed: SimulatedSession.defaultSeed &+ 100)
        var server: SimulatorServer?
        let service = SimulatedV2Service(simulator: simulator, throttles: false)
        if transport == .http {
            do {
                server = try SimulatorServer(
                    listener: try HTTPListener(), service: service,
                    limits: HTTPServerLimits(shutdownGrace: .milliseconds(100)))
            } catch {
                return ScenarioResult(
                    name: scenario.name, file: scenario.file,
                    failure: ScenarioFailure(
                        file: scenario.file, line: 1, step: "start the HTTP server", expected: "a server on 127.0.0.1",
                        actual: "\(error)", context: []),
                    milliseconds: 0, transitionsExercised: [], secretsMinted: [])
            }
        }
        let serverURL = server?.url
        var world = ScenarioRun.World(
            scenario: scenario, clock: clock, simulator: simulator, overV2Wire: transport == .v2Wire,
            backend: { @Sendable () -> (any EntitlementBackend)? in
                // Over HTTP every engine has a client of its own, as every backend instance would.
                serverURL.map { url in
                    V2Client(
                        transport: ScenarioV2Transport(baseURL: url, service: service),
                        softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: scenario.world.serviceProvider,
                        clock: clock)
                }
            })
        // Over HTTP the programmer's servers answer on the same server.
        world.programmerURL = { id in serverURL.map { SimulatorHTTPApp.programmerURL(baseURL: $0, serverID: id) } }
        world.securityAPIBase = { id in serverURL.map { SimulatorHTTPApp.securityAPIBase(baseURL: $0, providerID: id) } }
        world.stepUpURL = { id in serverURL.map { SimulatorHTTPApp.stepUpURL(baseURL: $0, serverID: id) } }
        var run = ScenarioRun(world, recorder: recorder)
        let failure = await run.execute()
        await server?.shutdown()
        let elapsed = ContinuousClock.now - start
        return ScenarioResult(
            name: scenario.name, file: scenario.file, failure: failure, milliseconds: Int(elapsed.milliseconds),
            transitionsExercised: run.transitions,
            secretsMinted: await simulator.issuedSecrets + simulator.chainProviders.flatMap(\.minted))
    }
}
