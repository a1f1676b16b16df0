import EntitlementEngine
import EntitlementSimulator
import Synchronization
import Testing

/// Logs and metrics from the boundary events: counters by call, callback, operation and outcome, a
/// latency per response, every line tagged with its session, no secret in any line.
@Suite("Telemetry: logs and metrics")
struct TelemetryTests {
    final class Lines: EngineLogHandler {
        let lines = Mutex<[(LogLevel, String, [String: String])]>([])
        func log(level: LogLevel, message: String, metadata: [String: String]) { lines.withLock { $0.append((level, message, metadata)) } }
    }

    final class Measurements: EngineMetricsHandler {
        let counters = Mutex<[String: Int64]>([:])
        let timers = Mutex<[String: Int]>([:])
        static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
            ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " ")
        }
        func increment(counter label: String, dimensions: [(String, String)], by amount: Int64) {
            counters.withLock { $0[Self.key(label, dimensions), default: 0] += amount }
        }
        func record(timer label: String, dimensions: [(String, String)], nanoseconds: Int64) {
            #expect(nanoseconds >= 0)
            timers.withLock { $0[Self.key(label, dimensions), default: 0] += 1 }
        }
    }

    /// A failed configuration that a later call tries again is a warning someone should see (it used to
    /// leave the session failed, silently, until it was closed).
    @Test func aConfigurationTriedAgainIsLoggedAtWarning() async throws {
        let lines = Lines()
        let telemetry = EngineTelemetry(session: "device-1|sim-requestor", logger: lines, metrics: nil, minimumLevel: .warning)
        let session = SimulatedSession(echo: { telemetry.observe($0) })
        await session.simulator.inject(.fail(.network("connection refused")), into: .configuration, times: 1)
        await session.enabler.setRequestor("sim-requestor")
        await session.settle()
        await session.clock.advance(by: .seconds(1))
        await session.enabler.checkAuthentication()
        await session.settle()
        let written = lines.lines.withLock { $0 }.filter { $0.0 == .warning }.map(\.1)
        #expect(written.contains("configuring 'sim-requestor' again for a call (it failed 1 time in a row)"), "\(written)")
        let machine = await session.enabler.machineSnapshot
        #expect(machine.configuration.kind == .configured, "the call configured the session again")
    }

    @Test func countersTimersAndTaggedLinesWithoutSecrets() async throws {
        let lines = Lines()
        let measurements = Measurements()
        let telemetry = EngineTelemetry(session: "device-1|sim-requestor", logger: lines, metrics: measurements, minimumLevel: .debug)
        let session = SimulatedSession(echo: { telemetry.observe($0) })
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.setSelectedProvider("acme-cable")
        await session.settle()
        _ = await session.logIn(as: "alice", password: "wonderland")
        await session.enabler.getAuthorization("news-channel")
        await session.settle()
        await session.simulator.inject(.fail(.network("connection reset")), into: .authorize, times: 1)
        await session.enabler.getAuthorization("news-channel")
        await session.settle()
        await session.enabler.getAuthorization("")
        await session.settle()

        let counters = measurements.counters.withLock { $0 }
        #expect(counters["entitle.calls call=getAuthorization"] == 3)
        #expect(counters["entitle.callbacks callback=setToken"] == 1)
        #expect(counters["entitle.callbacks callback=tokenRequestFailed"] == 1)
        #expect(counters["entitle.backend.requests operation=authorize"] == 2)
        #expect(counters["entitle.backend.responses operation=authorize outcome=success"] == 1)
        #expect(counters["entitle.backend.responses operation=authorize outcome=network"] == 1)
        #expect(counters["entitle.backend.responses operation=configuration outcome=success"] == 1)
        let timers = measurements.timers.withLock { $0 }
        #expect(timers["entitle.backend.latency operation=authorize outcome=network"] == 1)
        let written = lines.lines.withLock { $0 }
        #expect(written.allSatisfy { $0.2["session"] == "device-1|sim-requestor" })
        #expect(written.contains { $0.0 == .warning && $0.1.hasPrefix("← authorize failed: network error") })
        #expect(written.contains { $0.0 == .error && $0.1.contains("INVALID_ARGUMENT") }, "a refusal's status at its level")
        #expect(written.contains { $0.2["call"] != nil })
        for secret in await session.simulator.issuedSecrets where secret.count >= 8 {
            #expect(!written.contains { $0.1.contains(secret) || $0.2.values.contains { $0.contains(secret) } }, "a secret in a log line")
        }
    }

    @Test func linesBelowTheMinimumLevelAreNotWritten() async {
        let lines = Lines()
        let telemetry = EngineTelemetry(session: "s", logger: lines, minimumLevel: .warning)
        let session = SimulatedSession(echo: { telemetry.observe($0) })
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthorization("")
        await session.settle()
        let written = lines.lines.withLock { $0 }
        #expect(!written.isEmpty && written.allSatisfy { $0.0 >= .warning }, "\(written.map(\.1))")
    }
}
