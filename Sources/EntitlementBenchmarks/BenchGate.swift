import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTracing
import Foundation

/// `entitle bench gate`: the speed regression gate. Each figure is a **same-run ratio** — the package's
/// work against a reference doing comparable work, timed in alternating rounds in one process — so a
/// faster or slower machine moves both sides and the ratio stays. Each ratio is taken twice: of the
/// process CPU the sides use (what a change in the package's work moves; other processes on the machine
/// do not) and of their wall-clock time (what a wait moves — a sleep, a lock, a hop that blocks — which
/// uses no CPU). A figure fails when a ratio is worse than the committed baseline's by more than its
/// margin in each of three measurements (a slowdown stays; a noisy measurement does not repeat).
package struct BenchGate {
    /// One gated figure: what is timed against what. The ratio is of one unit of each side.
    struct Figure {
        /// The figure's key in the baseline file.
        let name: String
        /// What the two sides are, printed beside the figure.
        let definition: String
        /// One unit of the package's work.
        let subject: () async -> Void
        /// One unit of the reference.
        let reference: () async -> Void
    }

    /// How much CPU one timed batch of either side takes: both sides alike, so what the machine does
    /// to one (a cache flushed, a frequency step) is as likely to land on the other.
    static let batch = 0.002

    /// The CPU time the whole process (every thread) has used, in seconds. Another process taking the
    /// cores (a loaded CI runner) slows the wall clock of both sides unevenly — a side that hands work
    /// between threads waits for a core at each hop — but not the CPU either side uses.
    static func processCPU() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// What one batch took.
    struct Timing {
        /// Process CPU, seconds.
        var cpu: Double
        /// Wall-clock time, seconds.
        var wall: Double
    }

    /// The process CPU and the wall-clock time `body` takes.
    static func timing(_ body: () async -> Void) async -> Timing {
        let cpu = processCPU(), wall = ContinuousClock.now
        await body()
        return Timing(cpu: processCPU() - cpu, wall: EngineBenchmark.seconds(ContinuousClock.now - wall))
    }

    /// A figure's two ratios: subject over reference, in process CPU and in wall-clock time.
    package struct Ratios: Equatable, Sendable {
        /// The ratio of the CPU the two sides used.
        package var cpu: Double
        /// The ratio of the wall-clock time they took.
        package var wall: Double

        /// Ratios of CPU and wall-clock time.
        package init(cpu: Double, wall: Double) {
            self.cpu = cpu
            self.wall = wall
        }
    }

    /// A baseline file: `figure<TAB>cpu ratio<TAB>wall ratio` lines; `#` starts a comment.
    package struct Baseline: Equatable, Sendable {
        /// The committed ratios of each figure.
        package var ratios: [String: Ratios]

        /// A baseline of these ratios.
        package init(ratios: [String: Ratios]) { self.ratios = ratios }

        /// Reads a baseline file's text; the error names the first line that is not a figure's.
        package static func parse(_ text: String) -> Result<Baseline, BenchGateError> {
            var ratios: [String: Ratios] = [:]
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
                let content = line.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
                guard !content.isEmpty else { continue }
                let cells = content.split(separator: "\t").map { $0.trimmingCharacters(in: .whitespaces) }
                guard cells.count == 3, let cpu = Double(cells[1]), let wall = Double(cells[2]), cpu.isFinite, wall.isFinite, cpu > 0, wall > 0
                else {
                    return .failure(BenchGateError(message: "line \(number + 1) is not `figure<TAB>cpu ratio<TAB>wall ratio`: \(content.prefix(80))"))
                }
                ratios[cells[0]] = Ratios(cpu: cpu, wall: wall)
            }
            return .success(Baseline(ratios: ratios))
        }

        /// The file's text, figures in `order`, after a header of comment lines.
        package func text(order: [String], header: [String]) -> String {
            let lines = order.compactMap { name in
                ratios[name].map { "\(name)\t" + String(format: "%.3f\t%.3f", $0.cpu, $0.wall) }
            }
            return (header.map { "# " + $0 } + lines).joined(separator: "\n") + "\n"
        }
    }

    /// Why the gate could not run.
    package struct BenchGateError: Error, Equatable, Sendable {
        /// What went wrong, in one line.
        package let message: String
    }

    /// A figure's verdict against its baseline, from up to three measurements.
    package struct Verdict: Equatable, Sendable {
        /// The measurements taken, in order.
        package var measured: [Ratios]
        /// Whether some measurement's CPU ratio is within the limit.
        package var cpuWithin: Bool
        /// Whether some measurement's wall-clock ratio is within the limit.
        package var wallWithin: Bool
        /// Whether the figure passes: both ratios within their limits.
        package var passes: Bool { cpuWithin && wallWithin }
    }

    /// Alternating rounds per measurement (each ratio is of the sides' medians).
    let rounds: Int
    /// How much worse than the baseline a CPU ratio may be: `measured ≤ baseline × cpuMargin` passes.
    let cpuMargin: Double
    /// How much worse a wall-clock ratio may be.
    let wallMargin: Double

    /// A gate timing `rounds` alternating rounds per measurement, failing past the margins.
    package init(rounds: Int = BenchGate.defaultRounds, cpuMargin: Double = BenchGate.defaultCPUMargin, wallMargin: Double = BenchGate.defaultWallMargin) {
        self.rounds = rounds
        self.cpuMargin = cpuMargin
        self.wallMargin = wallMargin
    }

    /// The alternating rounds of one measurement `.ci/run` uses.
    package static let defaultRounds = 101
    /// The CPU margin `.ci/run` uses: 50 % (the DocC article *Performance* gives the noise it was set from).
    package static let defaultCPUMargin = 1.5
    /// The wall-clock margin `.ci/run` uses: 5× — other processes move wall-clock ratios (2.3× seen on a
    /// saturated machine), a wait in a hot path moves them far more.
    package static let defaultWallMargin = 5.0
    /// The figures, in the order they run and print.
    package static let names = [
        "session.engine/straight-line", "session.one-thread/straight-line", "session.recorder/no-recorder",
        "machine.session-inputs/reference", "actor.check-authentication/reference", "replay.streamed/reference",
        "sha256.1MiB/reference",
    ]

    /// Measures every figure `attempts` times; nil (after saying why) when the session the figures time
    /// did not go as scripted.
    package func measure(attempts: Int = 1) async -> [String: [Ratios]]? {
        guard let (figures, finish) = await Self.figures() else { return nil }
        defer { finish() }
        var measured: [String: [Ratios]] = [:]
        for figure in figures {
            for _ in 0..<attempts { measured[figure.name, default: []].append(await ratios(figure)) }
        }
        return measured
    }

    /// Checks today's ratios against `baseline`; prints one line a figure and returns whether all passed
    /// (nil when the figures could not be set up). A figure not in the baseline fails.
    package func check(against baseline: Baseline) async -> Bool? {
        guard let (figures, finish) = await Self.figures() else { return nil }
        defer { finish() }
        var passed = true
        print("figure | definition | baseline cpu, wall | limit cpu, wall | measured cpu, wall | verdict")
        for figure in figures {
            guard let committed = baseline.ratios[figure.name] else {
                print("\(figure.name) | \(figure.definition) | none | - | - | NOT IN THE BASELINE")
                passed = false
                continue
            }
            var measured: [Ratios] = []
            var verdict = judge(measured, against: committed)
            while !verdict.passes, measured.count < 3 {
                measured.append(await ratios(figure))
                verdict = judge(measured, against: committed)
            }
            passed = passed && verdict.passes
            func pair(_ ratios: Ratios) -> String { String(format: "%.3f, %.3f", ratios.cpu, ratios.wall) }
            let limit = Ratios(cpu: committed.cpu * cpuMargin, wall: committed.wall * wallMargin)
            let outcome = verdict.passes ? "ok" : [verdict.cpuWithin ? nil : "MORE CPU", verdict.wallWithin ? nil : "MORE WAITING"].compactMap { $0 }.joined(separator: ", ")
            print("\(figure.name) | \(figure.definition) | \(pair(committed)) | \(pair(limit)) | \(measured.map(pair).joined(separator: "; ")) | \(outcome)")
        }
        return passed
    }

    /// The verdict of `measured` against `committed`: each ratio passes when some measurement is within
    /// its limit (none measured: neither passes).
    package func judge(_ measured: [Ratios], against committed: Ratios) -> Verdict {
        Verdict(
            measured: measured, cpuWithin: measured.contains { $0.cpu <= committed.cpu * cpuMargin },
            wallWithin: measured.contains { $0.wall <= committed.wall * wallMargin })
    }

    /// One measurement: `rounds` rounds, each timing a batch of subject units and a batch of reference
    /// units (which goes first alternates), each batch about ``batch`` of CPU; the ratios of one subject
    /// unit's median CPU and wall-clock time to one reference unit's.
    private func ratios(_ figure: Figure) async -> Ratios {
        let subjectUnits = await Self.units(figure.subject), referenceUnits = await Self.units(figure.reference)
        func repeated(_ unit: @escaping () async -> Void, _ times: Int) -> () async -> Void {
            { for _ in 0..<times { await unit() } }
        }
        let subjectBatch = repeated(figure.subject, subjectUnits), referenceBatch = repeated(figure.reference, referenceUnits)
        var subject: [Timing] = [], reference: [Timing] = []
        for round in 0..<rounds {
            if round.isMultiple(of: 2) {
                subject.append(await Self.timing(subjectBatch))
                reference.append(await Self.timing(referenceBatch))
            } else {
                reference.append(await Self.timing(referenceBatch))
                subject.append(await Self.timing(subjectBatch))
            }
        }
        func ratio(_ side: KeyPath<Timing, Double>) -> Double {
            (EngineBenchmark.median(subject.map { $0[keyPath: side] }) / Double(subjectUnits))
                / (EngineBenchmark.median(reference.map { $0[keyPath: side] }) / Double(referenceUnits))
        }
        return Ratios(cpu: ratio(\.cpu), wall: ratio(\.wall))
    }

    /// How many units of `unit` make a batch about ``batch`` long (warmed first: the first run pays for
    /// lazily built tables and caches).
    private static func units(_ unit: () async -> Void) async -> Int {
        await unit()
        var times: [Double] = []
        for _ in 0..<5 { times.append(await Self.timing(unit).cpu) }
        return max(1, Int((batch / max(EngineBenchmark.median(times), 1e-9)).rounded()))
    }

    /// Work the package does not touch — the standard library's strings, dictionaries, arrays and sort —
    /// timed beside a figure whose other side is not the package's own work.
    static func referenceWork() -> Int {
        var table: [String: [Int]] = [:]
        for index in 0..<200 {
            table["key-\(index)", default: []].append(contentsOf: (0..<16).map { ($0 * 7919 + index) % 1009 })
        }
        var total = 0
        for (key, values) in table { total &+= key.utf8.count &+ values.sorted().reduce(0, &+) }
        return total
    }

    /// The figures, built on one checked cookbook session (its requests, page visits, inputs and trace).
    private static func figures() async -> (figures: [Figure], finish: () -> Void)? {
        let log = BenchCookbook.Log()
        let capture = EngineBenchmark.InputCapture()
        let recorder = TraceRecorder(recordedWith: "entitle bench gate")
        guard let checked = await BenchCookbook.engineSession(monitor: capture, log: log), checked.mediaTokens == 2,
            await BenchCookbook.engineSession(recorder: recorder) != nil
        else {
            print("bench gate: the cookbook session did not go as scripted")
            return nil
        }
        let requests = log.requests.withLock { $0 }, visits = checked.work.visits
        let inputs = capture.inputs.withLock { $0 }
        let tracePath = NSTemporaryDirectory() + "entitle-gate-\(UUID().uuidString).jsonl"
        guard (try? recorder.trace.text.write(toFile: tracePath, atomically: true, encoding: .utf8)) != nil,
            let replayed = try? TraceReplayer().replay(contentsOfFile: tracePath), replayed.divergence == nil
        else {
            print("bench gate: the cookbook trace does not replay")
            return nil
        }
        guard let enabler = await BenchCookbook.signedInEngine() else {
            print("bench gate: the engine with a stored login does not read as signed in")
            return nil
        }
        let executor = try? ThreadExecutor()
        let big = [UInt8](repeating: 0x61, count: 1 << 20)
        nonisolated(unsafe) var sink = 0
        let reference: () async -> Void = { sink &+= referenceWork() }
        var figures = [
            Figure(
                name: "session.engine/straight-line", definition: "a cookbook session on the engine / the same simulator calls in straight-line code",
                subject: { _ = await BenchCookbook.engineSession() },
                reference: { _ = await BenchCookbook.straightLine(requests, visits: visits, logging: false) }),
        ]
        if let executor {
            figures.append(
                Figure(
                    name: "session.one-thread/straight-line", definition: "the same, both on one ThreadExecutor",
                    subject: { _ = await BenchCookbook.engineSession(executor: executor) },
                    reference: { _ = await BenchCookbook.straightLine(requests, visits: visits, on: executor) }))
        } else {
            print("bench gate: no thread for a ThreadExecutor; its figure is not measured")
        }
        figures += [
            Figure(
                name: "session.recorder/no-recorder", definition: "a cookbook session recording a trace / without",
                subject: { _ = await BenchCookbook.engineSession(recorder: TraceRecorder()) },
                reference: { _ = await BenchCookbook.engineSession() }),
            Figure(
                name: "machine.session-inputs/reference", definition: "a session's \(inputs.count) inputs through a fresh bare machine / reference work",
                subject: {
                    var machine = EntitlementMachine(settings: .simulated, deviceID: "device-1")
                    for (input, at) in inputs { sink &+= machine.handle(input, at: at).effects.count }
                }, reference: reference),
            Figure(
                name: "actor.check-authentication/reference", definition: "100 checkAuthentication calls through the actor, a login stored / reference work",
                subject: { for _ in 0..<100 { await enabler.checkAuthentication() } }, reference: reference),
            Figure(
                name: "replay.streamed/reference", definition: "a cookbook trace (\(replayed.recordsReplayed) records) replayed from a file / reference work",
                subject: { sink &+= (try? TraceReplayer().replay(contentsOfFile: tracePath))?.recordsReplayed ?? 0 },
                reference: reference),
            Figure(
                name: "sha256.1MiB/reference", definition: "SHA-256 of 1 MiB / reference work",
                subject: { sink &+= Int(SHA256.hash(big)[0]) }, reference: reference),
        ]
        return (figures, {
            executor?.shutdown()
            try? FileManager.default.removeItem(atPath: tracePath)
        })
    }
}
