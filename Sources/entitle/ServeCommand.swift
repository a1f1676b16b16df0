import Dispatch
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
        var log: (@Sendable (String) -> Void)?
        if !quiet { log = { line in Self.say(line) } }
        do {
            server = try SimulatorServer(
                world: world, port: port, throttles: throttles, limits: HTTPServerLimits(connections: maxConnections), log: log)
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
        let signal = await Self.nextTerminationSignal()
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

    /// Waits for SIGINT or SIGTERM (their default action, ending the process at once, is turned off).
    static func nextTerminationSignal() async -> Int32 {
        await withCheckedContinuation { continuation in
            let once = OnceBox(continuation)
            for number in [SIGINT, SIGTERM] {
                signal(number, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { once.resume(number) }
                source.resume()
                OnceBox.keep(source)
            }
        }
    }
}

/// Resumes a continuation once, from whichever signal comes first.
private final class OnceBox: @unchecked Sendable {
    private let lock = NSLockLike()
    private var continuation: CheckedContinuation<Int32, Never>?
    nonisolated(unsafe) private static var sources: [any DispatchSourceSignal] = []

    init(_ continuation: CheckedContinuation<Int32, Never>) { self.continuation = continuation }

    static func keep(_ source: any DispatchSourceSignal) { sources.append(source) }

    func resume(_ number: Int32) {
        lock.lock()
        let pending = continuation
        continuation = nil
        lock.unlock()
        pending?.resume(returning: number)
    }
}

/// A pthread mutex (no Foundation needed here).
private final class NSLockLike: @unchecked Sendable {
    private var mutex = pthread_mutex_t()
    init() { pthread_mutex_init(&mutex, nil) }
    func lock() { pthread_mutex_lock(&mutex) }
    func unlock() { pthread_mutex_unlock(&mutex) }
}
