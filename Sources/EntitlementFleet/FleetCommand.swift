import EntitlementCommandLine
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

/// `entitle fleet`: a fleet under faults. Starts a real `redis-server`, the simulator on HTTP (in this
/// process, so its login pages are at hand and it can be made to refuse or hang) and NODES node
/// processes (`entitle fleet-node`), then drives DEVICES devices through whole journeys — login through
/// the MVPD's page, authorization, logout through the MVPD's logout page; a step-up of a PIN-protected
/// authorization, reported on any node; or a direct subscription's sign-in, reads and renewal — sending
/// every request to a
/// random node, while faults come on a seeded schedule: a node killed (SIGKILL, restarted), Redis hung
/// (SIGSTOP 5 s), Redis restarted empty and with its data, the simulator refusing or hanging for 5 s.
/// Then, with the faults healed, it checks the fleet's promises and exits 1 on any violation.
package struct FleetCommand {
    let devices: Int
    let nodes: Int
    let faultsPerKind: Int
    let seed: UInt64
    let concurrency: Int
    /// Fault kinds left out (by ``Fault/option``).
    let skipping: Set<String>
    /// How long the whole run may take: past it, the run ends as a violation (with its timeline).
    let timeLimit: Duration
    /// Whether the nodes share a six-node Redis Cluster instead of one server (its faults: a master hung,
    /// a master killed and started again).
    let cluster: Bool
    /// The folder of the certificate the nodes' TLS front presents (`--tls`), if any.
    let tls: String?

    /// The devices: every fourth a TV that logs in on a second screen (`tv-N`); every eighth (from the
    /// second) one that authorizes a PIN-protected resource through a step-up (`pin-N`), and every eighth
    /// (from the sixth) one that reads a direct subscription's issues (`sub-N`); the others with a web view
    /// (`device-N`).
    var deviceNames: [String] {
        (0..<devices).map { index in
            switch index % 8 {
            case 3, 7: "tv-\(index)"
            case 1: "pin-\(index)"
            case 5: "sub-\(index)"
            default: "device-\(index)"
            }
        }
    }

    /// A run of `devices` devices on `nodes` node processes, `faultsPerKind` faults of each kind not in
    /// `skipping`, seeded by `seed`, within `timeLimit`.
    package init(
        devices: Int, nodes: Int, faultsPerKind: Int, seed: UInt64, concurrency: Int, skipping: Set<String>, timeLimit: Duration,
        cluster: Bool, tls: String?
    ) {
        self.devices = devices
        self.nodes = nodes
        self.faultsPerKind = faultsPerKind
        self.seed = seed
        self.concurrency = concurrency
        self.skipping = skipping
        self.timeLimit = timeLimit
        self.cluster = cluster
        self.tls = tls
    }

    package enum Fault: String, CaseIterable {
        case killNode = "node killed"
        case redisHang = "Redis hung 5 s"
        case redisRestartEmpty = "Redis restarted empty"
        case redisRestartWithData = "Redis restarted with its data"
        case adobeRefuses = "simulator refusing 5 s"
        case adobeHangs = "simulator hanging 5 s"

        /// The kind's name on the command line (`--skip NAME`).
        package var option: String {
            switch self {
            case .killNode: "node-kill"
            case .redisHang: "redis-hang"
            case .redisRestartEmpty: "redis-restart-empty"
            case .redisRestartWithData: "redis-restart-data"
            case .adobeRefuses: "adobe-refuses"
            case .adobeHangs: "adobe-hangs"
            }
        }
    }

    package func run() async -> ExitStatus {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("entitle-fleet-\(getpid())").path
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let keep = Atomic<Bool>(false)
        defer { if !keep.load(ordering: .relaxed) { try? FileManager.default.removeItem(atPath: folder) } }
        let fleet: Fleet
        do {
            fleet = try await Fleet.start(nodes: nodes, folder: folder, cluster: cluster, tls: tls)
        } catch {
            StandardError.write("entitle fleet: \(error)\n")
            return .unavailable
        }
        print("fleet: \(fleet.redis.summary), the simulator at \(fleet.adobeURL), \(nodes) nodes, \(devices) devices, seed \(seed)")

        // Journeys under faults.
        let stats = Stats()
        let watchdog = Task { [timeLimit] in
            guard (try? await Task.sleep(for: timeLimit)) != nil else { return }
            print("VIOLATION: the run did not end within \(timeLimit)")
            for event in stats.snapshot().timeline { print("  \(event)") }
            print("fleet: the nodes' logs are in \(folder)")
            await fleet.stop()
            exit(ExitStatus.failure.rawValue)
        }
        defer { watchdog.cancel() }
        var random = SplitMix64(seed: seed)
        let kinds = Fault.allCases.filter { !skipping.contains($0.option) }
        let schedule = (0..<faultsPerKind).flatMap { _ in kinds }.shuffled(using: &random)
        let faultsOver = Atomic<Bool>(false)
        let faults = Task {
            await inject(schedule, into: fleet, seed: seed, stats: stats)
            faultsOver.store(true, ordering: .relaxed)
        }
        // Journeys go on, device after device, until the last fault is over.
        await drive(devices: deviceNames, fleet: fleet, stats: stats, seed: seed &+ 1) {
            !faultsOver.load(ordering: .relaxed)
        }
        await faults.value
        await fleet.heal()
        stats.event("faults over, healed")

        // With the faults healed: every device logs in afresh, and every node answers it alike.
        try? await Task.sleep(for: .seconds(2))
        let before = stats.snapshot()
        await drive(devices: deviceNames, fleet: fleet, stats: stats, seed: seed &+ 2) { false }
        let healed = stats.snapshot().failures(since: before)
        stats.event("healed journeys done")
        let disagreements = await agreement(fleet: fleet, devices: Array(deviceNames.prefix(100)))

        // Stop the nodes (SIGTERM: their sessions' calls answered) and read their logs.
        let died = fleet.nodesThatDied()
        let stuck = await fleet.stopNodes()
        await fleet.stop()
        let ledger = Ledger.read(folder: folder)
        let secrets = secretsInLogs(folder: folder, seen: stats.secrets())

        var violations = died
        let report = stats.snapshot()
        if report.hung > 0 { violations.append("\(report.hung) device requests hung (no answer in 60 s)") }
        if !healed.isEmpty { violations.append("after the faults healed, journeys failed: \(healed.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "))") }
        if report.failedClearOfFaults > 0 { violations.append("\(report.failedClearOfFaults) journeys failed with no fault during them or in the \(Stats.faultAftermath) before") }
        violations += stuck.map { "node \($0) did not exit within 30 s of SIGTERM" }
        violations += disagreements
        violations += ledger.violations
        violations += secrets

        print(report.table(faults: schedule.count, kinds: faultsPerKind, ledger: ledger))
        if violations.isEmpty {
            print("fleet: every promise kept (\(ledger.accepted) calls accepted, each answered once; no hung request; nodes agree; fresh logins work; no secret in any log)")
            return .success
        }
        for violation in violations { print("VIOLATION: \(violation)") }
        for event in report.timeline { print("  \(event)") }
        keep.store(true, ordering: .relaxed)
        print("fleet: the nodes' logs are in \(folder)")
        return .failure
    }

    // MARK: - Devices

    /// Each device's journey, `concurrency` devices at a time, every request to a random node; while
    /// `again` says so, the devices go round again.
    private func drive(
        devices: [String], fleet: Fleet, stats: Stats, seed: UInt64, again: @escaping @Sendable () -> Bool
    ) async {
        // A device runs one journey at a time: one whose last journey still runs is skipped this round.
        await withTaskGroup(of: String.self) { group in
            var next = 0
            var busy: Set<String> = []
            func add() {
                for _ in 0..<devices.count {
                    guard next < devices.count || again() else { return }
                    let device = devices[next % devices.count]
                    let deviceSeed = seed &+ UInt64(next)
                    next += 1
                    guard busy.insert(device).inserted else { continue }
                    group.addTask {
                        var journey = Journey(device: device, fleet: fleet, stats: stats, seed: deviceSeed)
                        await journey.run()
                        return device
                    }
                    return
                }
            }
            for _ in 0..<min(concurrency, devices.count) { add() }
            while let done = await group.next() {
                busy.remove(done)
                add()
            }
        }
    }

    /// After the faults: every node answers `checkAuthentication` for a device the same way.
    private func agreement(fleet: Fleet, devices: [String]) async -> [String] {
        var problems: [String] = []
        for device in devices {
            var answers: Set<String> = []
            for node in 0..<fleet.nodeCount {
                let answer = await fleet.send("checkAuthentication", device: device, to: node)
                answers.insert(answer.lines.first { $0.hasPrefix("setAuthenticationStatus") }.map { String($0.split(separator: "\t")[1]) } ?? "none")
            }
            if answers.count != 1 { problems.append("\(device): nodes disagree on checkAuthentication: \(answers.sorted())") }
        }
        return problems
    }

    // MARK: - Faults

    private func inject(_ schedule: [Fault], into fleet: Fleet, seed: UInt64, stats: Stats) async {
        var random = SplitMix64(seed: seed &+ 3)
        for fault in schedule {
            try? await Task.sleep(for: .milliseconds(Int(300 + random.next() % 700)))
            stats.fault(fault)
            switch fault {
            case .killNode: await fleet.killAndRestart(node: Int(random.next() % UInt64(fleet.nodeCount)))
            case .redisHang: await fleet.redis.hang(for: .seconds(5))
            case .redisRestartEmpty: await fleet.redis.restart(keepingData: false)
            case .redisRestartWithData: await fleet.redis.restart(keepingData: true)
            case .adobeRefuses: await fleet.adobe(.refusing, for: .seconds(5))
            case .adobeHangs: await fleet.adobe(.hanging, for: .seconds(5))
            }
            stats.faultOver()
        }
    }

    /// Secrets the devices were handed (login-page session codes, media tokens) and the users'
    /// passwords must not appear in any node's log.
    private func secretsInLogs(folder: String, seen: Set<String>) -> [String] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var problems: [String] = []
        let planted = seen.union(SimulatedWorld.default.users.map(\.password))
        // The logs are split into words at every separator a URL or a line can have, and each word is
        // looked up (a secret is one such word: a password, a session code, a token).
        let separators = Set(" \t\n\r,;/?&=:\"'()[]<>".utf8)
        for file in files where file.hasSuffix(".log") || file.hasSuffix(".err") {
            guard let bytes = FileManager.default.contents(atPath: folder + "/" + file) else { continue }
            for word in bytes.split(whereSeparator: { separators.contains($0) }) where word.count >= 6 {
                let text = String(decoding: word, as: UTF8.self)
                if planted.contains(text) {
                    problems.append("\(file) holds a secret in clear (\(text.prefix(3))…)")
                    break
                }
            }
        }
        return problems
    }
}

// MARK: - What happened

/// Counts of one run, shared by the journeys.
final class Stats: Sendable {
    struct Snapshot {
        var requests = 0
        var hung = 0
        var latencies: [Duration] = []
        var journeys: [String: Int] = [:]
        var logins: [String: Int] = [:]
        var faults: [String: Int] = [:]
        var timeline: [String] = []
        /// When each fault began and, once over, ended.
        var faultWindows: [(began: ContinuousClock.Instant, ended: ContinuousClock.Instant?)] = []
        /// Journeys that failed although no fault ran during them or just before.
        var failedClearOfFaults = 0

        /// Whether a fault ran between `start` (less its aftermath) and now.
        func faultTouched(journeyFrom start: ContinuousClock.Instant) -> Bool {
            faultWindows.contains { window in
                guard let ended = window.ended else { return true }
                return ended + Stats.faultAftermath >= start
            }
        }

        func failures(since earlier: Snapshot) -> [String: Int] {
            var failed: [String: Int] = [:]
            for (outcome, count) in journeys where outcome != "ok" {
                let new = count - (earlier.journeys[outcome] ?? 0)
                if new > 0 { failed[outcome] = new }
            }
            return failed
        }

        func table(faults scheduled: Int, kinds: Int, ledger: Ledger) -> String {
            let sorted = latencies.sorted()
            func percentile(_ p: Double) -> String {
                guard !sorted.isEmpty else { return "-" }
                let value = sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
                return "\(value.components.seconds * 1000 + value.components.attoseconds / 1_000_000_000_000_000) ms"
            }
            let cells: [String] = [
                "\(journeys.values.reduce(0, +))", "\(scheduled) (\(kinds) of each kind run)", "\(requests)", "\(ledger.accepted)",
                "\(ledger.doubled)", "\(ledger.unanswered)", percentile(0.5), percentile(0.99), "\(hung)",
            ]
            var lines: [String] = [
                "| devices' journeys | faults | requests | calls accepted | answered twice | unanswered (live nodes) | p50 | p99 | hung |",
                "|---|---|---|---|---|---|---|---|---|",
                "| " + cells.joined(separator: " | ") + " |",
                "",
                "journeys by outcome: " + journeys.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                "logins by kind: " + logins.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "),
                "faults: " + faults.sorted { $0.key < $1.key }.map { "\($0.key) ×\($0.value)" }.joined(separator: ", "),
                "calls lost with a killed node: \(ledger.lostWithKilledNodes)",
            ]
            if !ledger.codes.isEmpty {
                lines.append("answers by failure code: " + ledger.codes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))
            }
            return lines.joined(separator: "\n")
        }
    }

    private let state = Mutex(Snapshot())
    private let seen = Mutex<Set<String>>([])

    private let started = ContinuousClock.now

    /// Seconds since the run started, for the timeline.
    private var at: String {
        let elapsed = ContinuousClock.now - started
        return "\(elapsed.components.seconds).\(elapsed.components.attoseconds / 100_000_000_000_000_000)s"
    }

    func request(_ answer: Fleet.Answer, call: String, node: Int) {
        let at = self.at
        state.withLock { state in
            state.requests += 1
            if answer.problem == "hung" {
                state.hung += 1
                state.timeline.append("\(at) hung: \(call.split(separator: " ").first ?? "") on node \(node) (sent \(answer.elapsed) earlier)")
            } else {
                state.latencies.append(answer.elapsed)
                if answer.elapsed > .seconds(20) {
                    state.timeline.append("\(at) slow: \(call.split(separator: " ").first ?? "") on node \(node) took \(answer.elapsed)")
                }
            }
        }
    }

    func journey(_ outcome: String) { state.withLock { $0.journeys[outcome, default: 0] += 1 } }
    func login(_ kind: String) { state.withLock { $0.logins[kind, default: 0] += 1 } }
    /// How long after a fault a journey that began may still fail because of it: the engine's storage
    /// retry window (5 s) and a little more.
    static let faultAftermath: Duration = .seconds(7)

    func fault(_ fault: FleetCommand.Fault) {
        let at = self.at
        state.withLock { state in
            state.faults[fault.rawValue, default: 0] += 1
            state.timeline.append("\(at) fault: \(fault.rawValue)")
            state.faultWindows.append((.now, nil))
        }
    }

    /// The fault begun last is over.
    func faultOver() {
        state.withLock { state in
            if let last = state.faultWindows.indices.last { state.faultWindows[last].ended = .now }
        }
    }

    private let history = Mutex<[String: [String]]>([:])

    /// Keeps a device's last journeys (for the report of one that fails after the faults healed).
    func remember(_ device: String, _ outcome: String, _ trail: [String]) {
        let at = self.at
        history.withLock { history in
            history[device, default: []].append("\(at) journey (\(outcome)):\n        " + trail.joined(separator: "\n        "))
            if history[device]!.count > 3 { history[device]!.removeFirst() }
        }
    }

    /// A journey that failed with no fault during it or just before, or after the faults healed, is a
    /// violation: keep what it, and the device's journeys before it, went through.
    func failedJourney(_ device: String, _ outcome: String, _ trail: [String], startedAt start: ContinuousClock.Instant) {
        let at = self.at
        let before = history.withLock { $0[device] ?? [] }.dropLast()
        state.withLock { state in
            let healed = state.timeline.contains(where: { $0.hasSuffix("faults over, healed") })
            let clear = !state.faultTouched(journeyFrom: start)
            if clear && !healed { state.failedClearOfFaults += 1 }
            guard healed || clear else { return }
            state.timeline.append(
                "\(at) \(device) failed (\(outcome)):\n      " + trail.joined(separator: "\n      ")
                    + (before.isEmpty ? "" : "\n      before that:\n      " + before.joined(separator: "\n      ")))
        }
    }

    func event(_ text: String) {
        let at = self.at
        state.withLock { $0.timeline.append("\(at) \(text)") }
    }
    func secret(_ value: String) {
        // A media token whole; a login page's URL whole and its session code (the last path segment).
        let path = value.split(separator: "?").first.map(String.init) ?? value
        let code = path.split(separator: "/").last.map(String.init) ?? value
        seen.withLock { $0.formUnion([value, code].filter { $0.count >= 8 }) }
    }
    func secrets() -> Set<String> { seen.withLock { $0 } }
    func snapshot() -> Snapshot { state.withLock { $0 } }
}

/// The nodes' event logs read back: exactly once per node incarnation.
struct Ledger {
    var accepted = 0
    var doubled = 0
    var unanswered = 0
    var lostWithKilledNodes = 0
    var codes: [String: Int] = [:]
    var violations: [String] = []

    static func read(folder: String) -> Ledger {
        var ledger = Ledger()
        let files = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".log") }.sorted()
        for file in files {
            guard let text = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8) else { continue }
            // One incarnation per `start` line; one that logged `shutdown` ended cleanly.
            var incarnations: [[Substring]] = []
            for line in text.split(separator: "\n") {
                if line.hasPrefix("start ") { incarnations.append([]) }
                if !incarnations.isEmpty { incarnations[incarnations.count - 1].append(line) }
            }
            for (number, lines) in incarnations.enumerated() {
                var accepted: Set<String> = []
                var answers: [String: Int] = [:]
                let clean = lines.contains { $0.hasPrefix("shutdown ") }
                for line in lines {
                    let fields = line.split(separator: " ").map(String.init)
                    if fields.first == "accepted", fields.count >= 3 {
                        ledger.accepted += 1
                        accepted.insert(fields[1] + " " + fields[2])
                    } else if fields.first == "answered", fields.count >= 4 {
                        for id in fields[2].split(separator: ",") {
                            let key = fields[1] + " " + id
                            answers[key, default: 0] += 1
                            if answers[key] == 2 {
                                ledger.doubled += 1
                                ledger.violations.append("\(file) incarnation \(number + 1): \(key) answered twice")
                            }
                        }
                        if fields.count >= 5 { ledger.codes[fields[4], default: 0] += 1 }
                    }
                }
                // An answer may be logged before its call's `accepted` line (callbacks at once): compare sets.
                let left = accepted.filter { answers[$0] == nil }.count
                if clean {
                    ledger.unanswered += left
                    if left > 0 { ledger.violations.append("\(file) incarnation \(number + 1): \(left) accepted calls never answered") }
                } else {
                    ledger.lostWithKilledNodes += left
                }
            }
        }
        return ledger
    }
}
