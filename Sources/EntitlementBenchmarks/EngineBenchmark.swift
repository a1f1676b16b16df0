import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTracing
import Foundation
import Synchronization

/// `entitle bench engine`: the figures of "run in production" in one run, each against its target,
/// printed as a table. Ratios compare the same work on both sides (checked before timing); rates run
/// for a fixed time. Build with `-c release`: a debug build measures the debug build.
package struct EngineBenchmark {
    /// How many host sessions the memory figure creates (in a child process of its own).
    let sessions: Int
    /// Seconds each rate is measured for.
    let seconds: Double
    /// Only these parts (for profiling one): `cookbook` (session, machine, recording), `machine` (the
    /// bare machine alone), `actor`, `host` (logins through a host), `sessions`, `replay`, `sha256`, `verify`; empty for all.
    var only: Set<String> = []
    /// A saved run's figures by name (its printed output, read back), shown beside today's.
    var saved: [String: String]?

    /// A run measuring each rate for `seconds`, the memory figure with `sessions` sessions, `only` these
    /// parts; `saved` (an earlier run's output) puts its figures beside today's.
    package init(sessions: Int, seconds: Double, only: Set<String>, saved: String? = nil) {
        self.sessions = sessions
        self.seconds = seconds
        self.only = only
        self.saved = saved.map(Self.figures)
    }

    /// The figures of a run's printed table (`| figure | measured | target | met |`, with or without a
    /// `saved` column), by figure.
    package static func figures(of output: String) -> [String: String] {
        var figures: [String: String] = [:]
        for line in output.split(separator: "\n") where line.hasPrefix("| ") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 6, cells[1] != "figure" else { continue }
            figures[cells[1]] = cells.count >= 7 ? cells[3] : cells[2]  // a compared run's own figure is its third column
        }
        return figures
    }

    /// The machine's load averages and cores, as `/proc/loadavg` says (a busy machine measures less).
    package static var loadLine: String {
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8))?.split(separator: " ").prefix(3).joined(separator: " ") ?? "unknown"
        return "load average \(load) (1, 5, 15 min) on \(ProcessInfo.processInfo.activeProcessorCount) cores"
    }

    /// The parts `--only` names.
    package static let parts = ["cookbook", "machine", "actor", "host", "sessions", "replay", "sha256", "verify"]

    private func wants(_ part: String) -> Bool { only.isEmpty || only.contains(part) }

    /// One row of the table.
    struct Row {
        let figure: String
        let measured: String
        let target: String
        let met: Bool
    }

    /// Measures and prints the figures; the exit status (0 when every run completed).
    package func run() async -> Int32 {
        var rows: [Row] = []
        print("entitle bench engine: \(sessions) host sessions, \(seconds) s per rate\(Self.isDebugBuild ? " (DEBUG BUILD: use -c release)" : "")")
        if wants("cookbook") || only.contains("machine") {
            guard let cookbook = await cookbookRows(sessions: wants("cookbook")) else { return 1 }
            rows += cookbook
        }
        if wants("actor") { rows.append(await checkAuthenticationRow()) }
        if wants("host") { rows.append(await hostLoginRow()) }
        if wants("sessions") {
            guard let memory = sessionMemoryRows() else { return 1 }
            rows += memory
        }
        if wants("replay") {
            guard let replay = await replayRows() else { return 1 }
            rows += replay
        }
        if wants("sha256") { rows += sha256Rows() }
        if wants("verify") { rows.append(verificationRow()) }
        print()
        print(Self.loadLine)
        Self.printTable(rows, saved: saved)
        return 0
    }

    // MARK: - Cookbook session, bare machine, trace recording

    /// The engine's session against the same simulator calls in straight-line code; the bare machine
    /// fed the session's inputs; the session with a trace recorder against without. Without `sessions`,
    /// only the bare machine is timed (its inputs still come from one checked session).
    private func cookbookRows(sessions: Bool) async -> [Row]? {
        // Check first: the engine's session and the straight-line baseline do the same simulator work.
        let log = BenchCookbook.Log()
        let inputs = InputCapture()
        guard let checked = await BenchCookbook.engineSession(monitor: inputs, log: log), checked.mediaTokens == 2 else {
            print("bench: the cookbook session did not go as scripted")
            return nil
        }
        let requests = log.requests.withLock { $0 }
        let baseline = await BenchCookbook.straightLine(requests, visits: checked.work.visits, logging: true)
        guard baseline == checked.work else {
            print("bench: the straight-line baseline does not do the engine session's work")
            for (a, b) in zip(checked.work.exchanges, baseline.exchanges) where a != b {
                print("  engine:   \(a.request.operation) → \(a.result)\n  baseline: \(b.request.operation) → \(b.result)")
                break
            }
            print("  engine: \(checked.work.exchanges.count) requests, \(checked.work.visits.count) visits; baseline: \(baseline.exchanges.count), \(baseline.visits.count)")
            return nil
        }
        var rows = sessions ? await sessionRows(requests: requests, visits: checked.work.visits) : []

        // The bare machine: the session's inputs, fed again to fresh machines.
        let captured = inputs.inputs.withLock { $0 }
        let expected = await String(describing: checked.enabler.machineSnapshot.authentication)
        var machine = EntitlementMachine(settings: .simulated, deviceID: "device-1")
        for (input, at) in captured { _ = machine.handle(input, at: at) }
        guard String(describing: machine.authentication) == expected else {
            print("bench: the bare machine fed the session's inputs did not end where the engine did")
            return nil
        }
        var events = 0
        let machineTime = Self.timeSync(for: seconds) {
            var machine = EntitlementMachine(settings: .simulated, deviceID: "device-1")
            for (input, at) in captured { _ = machine.handle(input, at: at) }
            events += captured.count
        }
        let rate = Double(events) / machineTime
        print("bare machine: \(captured.count) inputs per session, \(events) inputs in \(String(format: "%.2f", machineTime)) s")
        // The trace recorder alone, fed the session's events (what it costs, apart from the engine): keeping
        // the records in memory, and writing its lines to a sink (as a service records to a file: every byte made).
        let reported = inputs.events.withLock { $0 }
        func recorded(_ makeRecorder: () -> TraceRecorder) -> (seconds: Double, sessions: Int) {
            var sessions = 0
            let elapsed = Self.timeSync(for: seconds / 2) {
                let recorder = makeRecorder()
                for event in reported { recorder.observe(event) }
                sessions += 1
            }
            return (elapsed / Double(max(sessions, 1)), max(sessions, 1))
        }
        let inMemory = recorded { TraceRecorder() }
        print("trace recorder alone: \(reported.count) events per session, \(Self.micros(inMemory.seconds)) per session")
        let sink = CountingSink()
        let streaming = recorded { TraceRecorder(streamingTo: sink) }
        print(
            "trace recorder alone, streaming its lines: \(Self.micros(streaming.seconds)) per session (\(sink.bytes / streaming.sessions) bytes)")
        rows.insert(
            Row(figure: "bare machine, a cookbook session's inputs", measured: Self.millions(rate, "events/s"),
                target: "≥ 5 M events/s", met: rate >= 5_000_000),
            at: min(1, rows.count))
        guard let check = await bareCheckAuthenticationRow() else { return nil }
        rows.insert(check, at: min(2, rows.count))
        return rows
    }

    /// The bare machine answering `checkAuthentication` with a login stored: the machine of an engine that
    /// read it from the store, fed the call again and again (what a read-only input costs the machine).
    private func bareCheckAuthenticationRow() async -> Row? {
        guard let enabler = await BenchCookbook.signedInEngine() else {
            print("bench: the signed-in engine did not read as signed in")
            return nil
        }
        var machine = await enabler.machineSnapshot
        let at = ManualClock().now()  // the signed-in engine's clock never moved from there
        var answered = 0
        var id: UInt64 = 1_000
        let elapsed = Self.timeSync(for: seconds) {
            for _ in 0..<1_000 {
                id += 1
                let step = machine.handle(.callReceived(CallID(id), .checkAuthentication), at: at)
                answered += step.effects.count
            }
        }
        let calls = Double(id - 1_000)
        guard answered == Int(calls) * 2 else {
            print("bench: the bare machine did not answer checkAuthentication with its tracking data and status")
            return nil
        }
        let rate = calls / elapsed
        return Row(figure: "bare machine, checkAuthentication, a login stored", measured: Self.millions(rate, "calls/s"),
                   target: "≥ 8 M calls/s", met: rate >= 8_000_000)
    }

    /// The engine's session against the straight-line baseline, and with a trace recorder against without.
    private func sessionRows(requests: [BackendRequest], visits: [String]) async -> [Row] {
        var engine: [Double] = [], straight: [Double] = [], recorded: [Double] = [], observed: [Double] = []
        let deadline = ContinuousClock.now + .seconds(seconds * 2)
        while ContinuousClock.now < deadline || engine.count < 5 {
            engine.append(await Self.time { _ = await BenchCookbook.engineSession() })
            straight.append(await Self.time { _ = await BenchCookbook.straightLine(requests, visits: visits, logging: false) })
            recorded.append(await Self.time { _ = await BenchCookbook.engineSession(recorder: TraceRecorder()) })
            observed.append(await Self.time { _ = await BenchCookbook.engineSession(monitor: IgnoringMonitor()) })
        }
        let session = Self.median(engine), line = Self.median(straight), withTrace = Self.median(recorded)
        print(
            "cookbook session: engine \(Self.micros(session)), straight-line \(Self.micros(line)), with a trace recorder \(Self.micros(withTrace)), with a monitor that ignores every event \(Self.micros(Self.median(observed))) (medians of \(engine.count))"
        )
        // Where the time goes that the profile cannot show: a thread that parks and is woken again.
        let rounds = 200
        let engineSwitches = await Self.contextSwitches { for _ in 0..<rounds { _ = await BenchCookbook.engineSession() } }
        let lineSwitches = await Self.contextSwitches { for _ in 0..<rounds { _ = await BenchCookbook.straightLine(requests, visits: visits, logging: false) } }
        let recordedSwitches = await Self.contextSwitches { for _ in 0..<rounds { _ = await BenchCookbook.engineSession(recorder: TraceRecorder()) } }
        func perSession(_ count: Int) -> String { String(format: "%.1f", Double(count) / Double(rounds)) }
        print(
            "context switches per cookbook session: engine \(perSession(engineSwitches)), straight-line \(perSession(lineSwitches)), with a trace recorder \(perSession(recordedSwitches))"
        )
        // The same on one thread's executor (the caller and the engine's tasks prefer it), against the
        // straight line run there too.
        var onThreadRows: [Row] = []
        if let executor = try? ThreadExecutor() {
            defer { executor.shutdown() }
            // The timing loop itself runs there, as a server's handler on its executor would.
            let (onThread, straightOnThread) = await withTaskExecutorPreference(executor) {
                var onThread: [Double] = [], straightOnThread: [Double] = []
                let until = ContinuousClock.now + .seconds(seconds)
                while ContinuousClock.now < until || onThread.count < 5 {
                    onThread.append(await Self.time { _ = await BenchCookbook.engineSession(executor: executor) })
                    straightOnThread.append(await Self.time { _ = await BenchCookbook.straightLine(requests, visits: visits, on: executor) })
                }
                return (onThread, straightOnThread)
            }
            let threadSession = Self.median(onThread), threadLine = Self.median(straightOnThread)
            let threadSwitches = await withTaskExecutorPreference(executor) {
                await Self.contextSwitches { for _ in 0..<rounds { _ = await BenchCookbook.engineSession(executor: executor) } }
            }
            print(
                "cookbook session on a ThreadExecutor: engine \(Self.micros(threadSession)), straight-line \(Self.micros(threadLine)) (medians of \(onThread.count)); context switches per session \(perSession(threadSwitches))"
            )
            onThreadRows.append(
                Row(figure: "the same on one ThreadExecutor, both sides", measured: Self.ratio(threadSession / threadLine),
                    target: "≤ 1.2×", met: threadSession / threadLine <= 1.2))
        } else {
            print("bench: no thread for a ThreadExecutor")
        }
        return [
            Row(figure: "cookbook session vs the same simulator calls, straight-line", measured: Self.ratio(session / line),
                target: "≤ 1.2×", met: session / line <= 1.2),
        ] + onThreadRows + [
            Row(figure: "trace recording on a cookbook session", measured: Self.ratio(withTrace / session),
                target: "≤ 1.2×", met: withTrace / session <= 1.2)
        ]
    }

    /// Every input a session's machine handled, with its time, and every event the engine reported.
    final class InputCapture: EngineMonitor {
        let inputs = Mutex<[(Input, Timestamp)]>([])
        let events = Mutex<[EngineEvent]>([])
        func observe(_ event: EngineEvent) {
            events.withLock { $0.append(event) }
            if case .inputHandled(let handled, let at) = event { inputs.withLock { $0.append((handled.input, at)) } }
        }
    }

    // MARK: - checkAuthentication through the actor

    private func checkAuthenticationRow() async -> Row {
        final class Silent: AccessEnablerDelegate {}
        let delegate = Silent()
        guard let enabler = await BenchCookbook.signedInEngine(delegate: delegate) else {
            return Row(figure: "checkAuthentication through the actor, a login stored", measured: "NOT SIGNED IN", target: "≥ 2 M calls/s", met: false)
        }
        var calls = 0
        let start = ContinuousClock.now
        let end = start + .seconds(seconds)
        while ContinuousClock.now < end {
            for _ in 0..<1000 { await enabler.checkAuthentication() }
            calls += 1000
        }
        let rate = Double(calls) / Self.seconds(ContinuousClock.now - start)
        withExtendedLifetime(delegate) {}
        return Row(figure: "checkAuthentication through the actor, a login stored", measured: Self.millions(rate, "calls/s"),
                   target: "≥ 2 M calls/s", met: rate >= 2_000_000)
    }

    // MARK: - Idle sessions in a host

    /// Runs the host's memory figure in a child process (a fresh heap: memory freed by earlier figures
    /// would otherwise be reused and hide the cost).
    private func sessionMemoryRows() -> [Row]? {
        let child: (termination: ChildProcess.Termination, output: [UInt8], errors: [UInt8])
        do { child = try ChildProcess.run(CommandLine.arguments[0], ["bench", "engine", "--sessions-child", String(sessions)]) } catch {
            print("bench: could not start the sessions child: \(error)")
            return nil
        }
        let output = String(decoding: child.output, as: UTF8.self)
        print(output, terminator: "")
        guard child.termination == .exited(0),
            let resting = Self.figure("resting bytes per session: ", in: output),
            let resident = Self.figure("resident bytes per session: ", in: output),
            let held = Self.figure("drive-by held bytes after the second wave: ", in: output),
            let peak = Self.figure("drive-by peak bytes: ", in: output)
        else {
            print("bench: the sessions child failed")
            return nil
        }
        func row(_ figure: String, _ perSession: Double) -> Row {
            let million = perSession * 1_000_000
            return Row(figure: figure, measured: String(format: "%.0f B each → %.2f GiB", perSession, million / 1_073_741_824),
                       target: "≤ 1 GiB", met: million <= 1_073_741_824)
        }
        return [
            row("1 M idle authenticated sessions in a host (RSS, from \(sessions))", resting),
            row("1 M resident engines (RSS, from \(sessions / 10), none resting)", resident),
            Row(
                figure: "drive-by devices forgotten: RSS still held after 2 waves of \(sessions)",
                measured: String(format: "%.1f MB of a %.1f MB peak", held / 1_048_576, peak / 1_048_576),
                target: "≤ 10 % of the peak", met: held <= peak / 10),
        ]
    }

    /// The number after `label` on the last line of `output` that starts with it.
    private static func figure(_ label: String, in output: String) -> Double? {
        output.split(separator: "\n").last(where: { $0.hasPrefix(label) }).flatMap { Double($0.dropFirst(label.count)) }
    }

    // MARK: - Trace replay

    private func replayRows() async -> [Row]? {
        let recorder = TraceRecorder(recordedWith: "entitle bench")
        guard await BenchCookbook.engineSession(recorder: recorder) != nil else { return nil }
        let text = recorder.trace.text
        let path = NSTemporaryDirectory() + "entitle-bench-\(UUID().uuidString).jsonl"
        defer { try? FileManager.default.removeItem(atPath: path) }
        guard let parsed = try? Trace.parse(text), TraceReplayer().replay(parsed).divergence == nil,
            (try? text.write(toFile: path, atomically: true, encoding: .utf8)) != nil,
            let streamed = try? TraceReplayer().replay(contentsOfFile: path), streamed.divergence == nil,
            streamed.recordsReplayed == parsed.records.count
        else {
            print("bench: the cookbook trace does not replay")
            return nil
        }
        var records = 0
        let elapsed = Self.timeSync(for: seconds) {
            guard let trace = try? Trace.parse(text) else { return }
            records += TraceReplayer().replay(trace).recordsReplayed
        }
        var streamedRecords = 0
        let streamedElapsed = Self.timeSync(for: seconds) {
            streamedRecords += (try? TraceReplayer().replay(contentsOfFile: path))?.recordsReplayed ?? 0
        }
        let rate = Double(records) / elapsed, streamedRate = Double(streamedRecords) / streamedElapsed
        return [
            Row(figure: "trace replay, parsed from text", measured: Self.millions(rate, "records/s"),
                target: "≥ 1 M records/s", met: rate >= 1_000_000),
            Row(figure: "trace replay, streamed from a file (flat memory)", measured: Self.millions(streamedRate, "records/s"),
                target: "≥ 1 M records/s", met: streamedRate >= 1_000_000),
        ]
    }

    // MARK: - SHA-256 and media tokens

    private func sha256Rows() -> [Row] {
        let big = [UInt8](repeating: 0x61, count: 1 << 20)
        let small = [UInt8](repeating: 0x61, count: 64)
        var bigBytes = 0, smallBytes = 0
        var sink: UInt8 = 0
        let bigTime = Self.timeSync(for: seconds) {
            sink ^= SHA256.hash(big)[0]
            bigBytes += big.count
        }
        let smallTime = Self.timeSync(for: seconds) {
            for _ in 0..<1000 { sink ^= SHA256.hash(small)[0] }
            smallBytes += small.count * 1000
        }
        let bigRate = Double(bigBytes) / bigTime / 1e6, smallRate = Double(smallBytes) / smallTime / 1e6
        if sink == 0x42 { print("") }  // keeps the hashes from being optimised away
        return [
            Row(figure: "SHA-256, 1 MiB inputs", measured: String(format: "%.0f MB/s", bigRate), target: "≥ 300 MB/s", met: bigRate >= 300),
            Row(figure: "SHA-256, 64 B inputs", measured: String(format: "%.0f MB/s", smallRate), target: "≥ 100 MB/s", met: smallRate >= 100),
        ]
    }

    private func verificationRow() -> Row {
        let clock = ManualClock()
        let key = SimulatedWorld.default.mediaTokenKey
        let claims = MediaTokenVerifier.Claims(
            tokenID: "bench-token", sessionGUID: "bench-session", requestorID: "sim-requestor", resourceID: "news-channel",
            issued: clock.now(), timeToLive: 420, mvpdID: "acme-cable")
        let token = MediaTokenVerifier.sign(claims, key: key)
        let verifier = MediaTokenVerifier(key: key, clock: clock)
        var valid = 0, count = 0
        let elapsed = Self.timeSync(for: seconds) {
            for _ in 0..<1000 {
                if case .valid = verifier.verify(token, resource: "news-channel", requestor: "sim-requestor") { valid += 1 }
            }
            count += 1000
        }
        let rate = Double(count) / elapsed
        return Row(figure: "media-token verifications", measured: String(format: "%.0f k/s", rate / 1000) + (valid == count ? "" : " (INVALID)"),
                   target: "≥ 500 k/s", met: rate >= 500_000 && valid == count)
    }

    // MARK: - Measuring and printing

    #if DEBUG
        package static let isDebugBuild = true
    #else
        package static let isDebugBuild = false
    #endif

    static func time(_ body: () async -> Void) async -> Double {
        let start = ContinuousClock.now
        await body()
        return seconds(ContinuousClock.now - start)
    }

    /// Runs `body` repeatedly for about `duration` seconds; returns the seconds it took.
    static func timeSync(for duration: Double, _ body: () -> Void) -> Double {
        let start = ContinuousClock.now
        let end = start + .seconds(duration)
        repeat { body() } while ContinuousClock.now < end
        return seconds(ContinuousClock.now - start)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (whole, fraction) = duration.components
        return Double(whole) + Double(fraction) / 1e18
    }

    /// The process's context switches (voluntary and not, every thread) while `body` runs.
    static func contextSwitches(_ body: () async -> Void) async -> Int {
        func count() -> Int {
            var usage = rusage()
            getrusage(RUSAGE_SELF.rawValue, &usage)
            return usage.ru_nvcsw + usage.ru_nivcsw
        }
        let before = count()
        await body()
        return count() - before
    }

    static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    static func micros(_ seconds: Double) -> String { String(format: "%.0f µs", seconds * 1e6) }
    static func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }
    static func millions(_ rate: Double, _ unit: String) -> String { String(format: "%.2f M \(unit)", rate / 1e6) }

    /// Prints the rows as a table; with `saved`, a `saved` column of the earlier run's figures (`–` for
    /// a figure it did not have) before today's.
    static func printTable(_ rows: [Row], saved: [String: String]? = nil) {
        var columns = [("figure", rows.map(\.figure))]
        if let saved { columns.append(("saved", rows.map { saved[$0.figure] ?? "–" })) }
        columns += [("measured", rows.map(\.measured)), ("target", rows.map(\.target)), ("met", rows.map { $0.met ? "yes" : "no" })]
        let widths = columns.map { column in max(column.0.count, column.1.map(\.count).max() ?? 0) }
        func pad(_ text: String, _ width: Int) -> String { text + String(repeating: " ", count: max(0, width - text.count)) }
        func line(_ cells: [String]) -> String { "| " + zip(cells, widths).map { pad($0, $1) }.joined(separator: " | ") + " |" }
        print(line(columns.map(\.0)))
        print("|" + widths.map { String(repeating: "-", count: $0 + 2) }.joined(separator: "|") + "|")
        for index in rows.indices { print(line(columns.map { $0.1[index] })) }
    }
}

/// A monitor that does nothing with the events: what the engine spends making them, apart from any
/// recorder's work.
private final class IgnoringMonitor: EngineMonitor {
    func observe(_ event: EngineEvent) {}
}

/// A trace sink that counts what it is given and keeps nothing.
private final class CountingSink: TraceSink {
    private let count = Mutex(0)
    var bytes: Int { count.withLock { $0 } }
    func write(line: String) { count.withLock { $0 += line.utf8.count } }
}
