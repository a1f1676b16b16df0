import EntitlementCommandLine
import EntitlementEngine
import EntitlementHTTPServer
import EntitlementScenarios
import EntitlementSimulator
import EntitlementSimulatorServer

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `entitle serve`: the simulator on 127.0.0.1 until SIGINT or SIGTERM.
struct ServeCommand {
    let port: UInt16
    let worldFile: String?
    let throttles: Bool
    let quiet: Bool
    let maxConnections: Int

    func run() async -> ExitStatus {
        var world = SimulatedWorld.default
        if let worldFile {
            do {
                let scenario = try CommandFile.scenario(worldFile)
                guard scenario.steps.isEmpty else {
                    StandardError.write("entitle serve: \(worldFile) has steps; a world file holds declarations only\n")
                    return .invalidInput
                }
                world = scenario.world
            } catch {
                StandardError.write("entitle serve: \(error)\n")
                return error.status
            }
        }
        let server: SimulatorServer
        let limits = HTTPServerLimits(connections: maxConnections)
        var log: (@Sendable (String) -> Void)?
        if !quiet { log = { line in Self.say(line) } }
        do {
            server = try SimulatorServer(
                world: world, port: port, throttles: throttles, limits: limits, log: log)
        } catch {
            StandardError.write("entitle serve: \(error)\n")
            return .unavailable
        }
        let served = await server.simulator.world
        Self.say("Serving the simulator at \(server.url)")
        Self.say("  REST API V2: \(server.url)/api/v2/<requestor>/…   client registration: \(server.url)/o/client/register")
        Self.say("  software statement: \(SimulatedClientRegistrar.softwareStatement)   throttling: \(throttles ? "on (burst 10, then 1/s per device)" : "off")")
        Self.say("  requestors: \(served.requestors.map(\.id).joined(separator: ", "))   second screen: \(server.url)/activate")
        Self.say("  users (name / password / MVPD):")
        for user in served.users { Self.say("    \(user.username) / \(user.password) / \(user.mvpdID)") }
        for line in Self.providerLines(served, url: server.url) { Self.say(line) }
        Self.say("Ctrl-C stops it.")
        let signal = await TerminationSignals.next(stopWithin: limits.shutdownGrace + .seconds(10), name: "entitle serve")
        Self.say("\nentitle serve: \(signal == SIGINT ? "SIGINT" : "SIGTERM"): stopping")
        await server.shutdown()
        Self.say("entitle serve: stopped")
        return .success
    }

    /// Where the world's providers beside the TV provider answer (`provider … server|subscription`
    /// declarations), with the subscribers who can sign in: what a `ServerAuthorizationProvider` or a
    /// `DirectSubscriptionProvider` is pointed at.
    static func providerLines(_ world: SimulatedWorld, url: String) -> [String] {
        var lines: [String] = []
        for provider in world.chainProviders {
            switch provider.kind {
            case .server:
                lines.append("  provider \(provider.id) (your service): POST \(SimulatorHTTPApp.programmerURL(baseURL: url, serverID: provider.id))")
                if let pin = provider.pin {
                    lines.append("    step-up page: POST \(SimulatorHTTPApp.stepUpURL(baseURL: url, serverID: provider.id)) (PIN \(pin) for \(provider.pinProtected.sorted().joined(separator: ", ")))")
                }
            case .subscription:
                lines.append("  provider \(provider.id) (Security API): \(SimulatorHTTPApp.securityAPIBase(baseURL: url, providerID: provider.id))"
                    + (provider.renews ? " (renews tokens)" : ""))
                for subscriber in world.subscribers where subscriber.providerID == provider.id {
                    let issues = subscriber.issues.sorted().joined(separator: ", ")
                    lines.append("    \(subscriber.username) / \(subscriber.password)\(subscriber.lapsed ? " (lapsed)" : ""): \(issues.isEmpty ? "no issues" : issues)")
                }
            case .simulated:
                continue  // answers in process only
            }
        }
        return lines
    }

    /// Writes one line to standard output at once (unbuffered: a pipe or file sees each line as
    /// it happens; lines from several connections never interleave).
    static func say(_ line: String) {
        var bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeMutableBytes { write(1, $0.baseAddress, $0.count) }
    }
}
