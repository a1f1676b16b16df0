import EntitlementEngine
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
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
        expectEqual(machine.configuration.kind, .configured, "the call configured the session again")
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
        expectEqual(counters["entitle.calls call=getAuthorization"], 3)
        expectEqual(counters["entitle.callbacks callback=setToken"], 1)
        expectEqual(counters["entitle.callbacks callback=tokenRequestFailed"], 1)
        expectEqual(counters["entitle.backend.requests operation=authorize"], 2)
        expectEqual(counters["entitle.backend.responses operation=authorize outcome=success"], 1)
        expectEqual(counters["entitle.backend.responses operation=authorize outcome=network"], 1)
        expectEqual(counters["entitle.backend.responses operation=configuration outcome=success"], 1)
        let timers = measurements.timers.withLock { $0 }
        expectEqual(timers["entitle.backend.latency operation=authorize outcome=network"], 1)
        let written = lines.lines.withLock { $0 }
        #expect(written.allSatisfy { $0.2["session"] == "device-1|sim-requestor" })
        #expect(written.contains { $0.0 == .warning && $0.1.hasPrefix("← authorize failed: network error") })
        #expect(written.contains { $0.0 == .error && $0.1.contains("INVALID_ARGUMENT") }, "a refusal's status at its level")
        #expect(written.contains { $0.2["call"] != nil })
        for secret in await session.simulator.issuedSecrets where secret.count >= 8 {
            #expect(!written.contains { $0.1.contains(secret) || $0.2.values.contains { $0.contains(secret) } }, "a secret in a log line")
        }
    }

    /// Each call is timed from its arrival to the callback that ends it, with how it ended; work that
    /// waits in the engine's mailbox is timed too.
    @Test func callDurationsAndTheMailboxAreMeasured() async throws {
        let measurements = Measurements()
        final class WithGauges: EngineMetricsHandler {
            let inner: Measurements
            let depths = Mutex<[Int64]>([])
            init(_ inner: Measurements) { self.inner = inner }
            func increment(counter label: String, dimensions: [(String, String)], by amount: Int64) {
                inner.increment(counter: label, dimensions: dimensions, by: amount)
            }
            func record(timer label: String, dimensions: [(String, String)], nanoseconds: Int64) {
                inner.record(timer: label, dimensions: dimensions, nanoseconds: nanoseconds)
            }
            func record(gauge label: String, dimensions: [(String, String)], value: Int64) {
                if label == "entitle.mailbox.depth" { depths.withLock { $0.append(value) } }
            }
        }
        let handler = WithGauges(measurements)
        let telemetry = EngineTelemetry(session: "s", metrics: handler)
        let clock = ManualClock()
        let simulator = Simulator(clock: clock, seed: 7)
        let enabler = AccessEnabler(
            backend: simulator.backend, environment: .deterministic(clock: clock, deviceID: "device-9", seed: 1), settings: .simulated,
            monitor: telemetry)
        await enabler.setRequestor("sim-requestor")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<5 { group.addTask { await enabler.checkAuthentication() } }
            group.addTask { await enabler.getAuthorization("") }
        }
        await enabler.whenIdle()
        let timers = measurements.timers.withLock { $0 }
        expectEqual(timers["entitle.call.duration call=setRequestor outcome=answered"], 1, "\(timers.keys.sorted())")
        expectEqual(timers["entitle.call.duration call=checkAuthentication outcome=failure"], 5, "\(timers.keys.sorted())")
        expectEqual(timers["entitle.call.duration call=getAuthorization outcome=refused"], 1, "\(timers.keys.sorted())")
        #expect((timers["entitle.mailbox.wait"] ?? 0) >= 7, "every call left the mailbox: \(timers.keys.sorted())")
        expectEqual(handler.depths.withLock { $0 }.count, timers["entitle.mailbox.wait"], "a depth with each wait")
    }

    /// A tracer that keeps every span it started.
    final class RecordingTracer: EngineTracer {
        final class Span: EngineSpan {
            let name: String
            let attributes: Mutex<[String: String]>
            let errors = Mutex<[String]>([])
            let ends = Mutex(0)
            init(_ name: String, _ attributes: [String: String]) {
                self.name = name
                self.attributes = Mutex(attributes)
            }
            func setAttribute(_ name: String, _ value: String) { attributes.withLock { $0[name] = value } }
            func recordError(_ error: any Error) { errors.withLock { $0.append("\(error)") } }
            func end() { ends.withLock { $0 += 1 } }
        }
        let spans = Mutex<[Span]>([])
        func startSpan(_ operationName: String, attributes: [String: String]) -> any EngineSpan {
            let span = Span(operationName, attributes)
            spans.withLock { $0.append(span) }
            return span
        }
    }

    /// Every backend request and storage operation runs in a span that names it, the device by its
    /// pseudonym and the requestor, ends once with its outcome, and records a failure as its error.
    @Test func spansWrapEveryBackendRequestAndStorageOperation() async throws {
        let tracer = RecordingTracer()
        let clock = ManualClock()
        let simulator = Simulator(clock: clock, seed: 7)
        let enabler = AccessEnabler(
            backend: simulator.backend, environment: .deterministic(clock: clock, deviceID: "device-9", seed: 1), settings: .simulated,
            monitor: EngineTelemetry(session: "s", tracer: tracer))
        await simulator.inject(.fail(.network("connection reset")), into: .configuration, times: 1)
        await enabler.setRequestor("sim-requestor")
        await enabler.whenIdle()
        await enabler.setRequestor("sim-requestor")
        await enabler.checkAuthentication()
        await enabler.whenIdle()
        let spans = tracer.spans.withLock { $0 }
        let names = spans.map(\.name)
        expectEqual(names.filter { $0 == "entitle.backend.configuration" }.count, 2, "\(names)")
        // (The version checked before each input is known at once by a store in memory: nothing to wait for, no span.)
        for name in ["entitle.storage.load", "entitle.storage.authentications"] {
            #expect(names.contains(name), "\(name) in \(names)")
        }
        #expect(spans.allSatisfy { $0.ends.withLock { $0 } == 1 }, "each span ended once")
        for span in spans {
            let attributes = span.attributes.withLock { $0 }
            #expect(attributes["entitle.device"] == DevicePseudonym.of("device-9") && attributes["entitle.requestor"] == "sim-requestor")
            #expect(!attributes.values.contains("device-9"), "the device by its pseudonym only")
        }
        let failed = spans.filter { $0.attributes.withLock { $0["entitle.outcome"] } != "ok" }
        expectEqual(failed.map(\.name), ["entitle.backend.configuration"], "\(failed.map(\.name))")
        expectEqual(failed.first?.attributes.withLock { $0["entitle.outcome"] }, "network")
        expectEqual(failed.first?.errors.withLock { $0 }.count, 1)
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
