import EntitlementFleet
import EntitlementBenchmarks
import EntitlementEngine
import EntitlementFuzzing
import EntitlementHTTPServer
import EntitlementTracing

/// The commands `entitle` understands (argument parsing is hand-written: no dependencies). Each
/// command's help is in ``CommandHelp``.
enum Command: Equatable {
    /// Run cookbook flows B to I, then J (beyond TV providers), against the embedded simulator.
    case demo
    /// Run scenario files and folders, in process or over HTTP, optionally writing JUnit XML.
    case run([String], overHTTP: Bool, junit: String?, html: String?)
    /// Register a software statement with REST API V2 once and store the client credentials.
    case register(adobe: String, statement: String, store: String)
    /// Serve the simulator over HTTP.
    case serve(port: UInt16, world: String?, throttles: Bool, quiet: Bool, maxConnections: Int)
    /// Save token sets to a file store in a loop until killed (the crash test's writer; not in help).
    case storageStress(String)
    /// Start a login on a file store (or, with `redis:PORT`, on Redis at 127.0.0.1:PORT) and print
    /// the redirect the web view reached, without handing it to the engine; with `stay`, then wait to
    /// be killed (the two-process session tests' first node; not in help).
    case sessionStart(String, stay: Bool)
    /// Run a benchmark.
    case bench(String, rounds: Int)
    /// Time `entitle serve`'s start and `logins` logins against it from `clients` at once.
    case benchServe(logins: Int, clients: Int)
    /// Check today's same-run speed ratios against a committed baseline, or write it (`bench gate`).
    case benchGate(baseline: String, write: Bool, marginPercent: Int, wallMarginPercent: Int, rounds: Int)
    /// Measure the Redis store against redis-benchmark (`bench redis`).
    case benchRedis(seconds: Int)
    /// Run the engine's figures (`bench engine`); with `child`, only the host's memory figure (the child process).
    case benchEngine(sessions: Int, seconds: Double, only: Set<String>, child: Bool, compare: String? = nil)
    /// Record a scenario run as a trace.
    case record(scenario: String, output: String, keepingPersonalData: Bool)
    /// Replay traces against today's engine; with `expectDivergence`, each must diverge.
    case replay([String], expectDivergence: Bool, junit: String?)
    /// Print a trace as a readable transcript.
    case showTrace(String)
    /// Write a trace as a page to read in a browser; with `markingDivergence`, its first divergence from today's code marked.
    case viewTrace(String, output: String, markingDivergence: Bool)
    /// Print the charts generated from the transition table (one, or all), or rewrite them in a folder.
    case chart(format: StateChart.Format, chart: String?, writeTo: String?)
    /// Run `count` cases of a fuzz target from `seed`; `child` runs them here and reports each seed.
    case fuzz(target: String, count: Int, seed: UInt64, child: Bool)
    /// Run a fleet of node processes on a real Redis under seeded faults and check its promises.
    case fleet(devices: Int, nodes: Int, faults: Int, seed: UInt64, concurrency: Int, skipping: Set<String>, timeLimit: Int, cluster: Bool, tls: String?)
    /// One node of `fleet` (not in help).
    case fleetNode(redisPort: UInt16, cluster: Bool, adobe: String, port: UInt16, log: String)
    /// Run the random explorer on `seeds` seeds from `from`.
    case explore(seeds: Int, from: UInt64, length: Int, trace: String?)
    /// Model-check a fleet of one device exhaustively within `bounds`.
    case check(FleetChecker.Bounds, all: Bool)
    /// Print the list of commands (`nil`) or one command's help.
    case help(String?)
    /// Print the version.
    case version

    /// The command `arguments` (without the program name) ask for.
    static func parse(_ arguments: [String]) -> Result<Command, UsageError> {
        do throws(UsageError) {
            return .success(try parseOrThrow(arguments))
        } catch {
            return .failure(error)
        }
    }

    private static func parseOrThrow(_ arguments: [String]) throws(UsageError) -> Command {
        guard let first = arguments.first else { throw UsageError("entitle: no command given", command: nil) }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "--version", "-V", "version": return .version
        case "help", "-h", "--help":
            guard let topic = rest.first else { return .help(nil) }
            if topic == "--help" || topic == "-h" { return .help("help") }
            guard CommandHelp.named(topic) != nil else {
                throw UsageError("entitle help: unknown command " + UsageError.named(topic, among: CommandHelp.all.map(\.name)), command: nil)
            }
            return .help(topic)
        default: break
        }
        if rest.contains("--help") || rest.contains("-h"), CommandHelp.named(first) != nil { return .help(first) }
        switch first {
        case "demo":
            let reader = ArgumentReader(rest, command: "demo", options: [])
            if let extra = rest.first { throw reader.unexpected(extra) }
            return .demo
        case "run": return try parseRun(rest)
        case "serve": return try parseServe(rest)
        case "register": return try parseRegister(rest)
        case "record": return try parseRecord(rest)
        case "replay": return try parseReplay(rest)
        case "trace": return try parseTrace(rest)
        case "chart": return try parseChart(rest)
        case "bench": return try parseBench(rest)
        case "explore": return try parseExplore(rest)
        case "check": return try parseCheck(rest)
        case "fleet": return try parseFleet(rest)
        case "fleet-node": return try parseFleetNode(rest)
        case "fuzz": return try parseFuzz(rest)
        case "storage-stress":
            let reader = ArgumentReader(rest, command: first, options: [])
            guard rest.count == 1 else { throw reader.error("give a folder") }
            return .storageStress(rest[0])
        case "session-start":
            let reader = ArgumentReader(rest, command: first, options: ["--stay"])
            let stay = rest.contains("--stay")
            let stores = rest.filter { $0 != "--stay" }
            guard stores.count == 1 else { throw reader.error("give a folder or redis:PORT") }
            return .sessionStart(stores[0], stay: stay)
        default:
            throw UsageError("entitle: unknown command " + UsageError.named(first, among: CommandHelp.all.map(\.name)), command: nil)
        }
    }

    // MARK: - Commands

    private static func parseFleet(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "fleet", options: ["--devices", "--nodes", "--faults", "--seed", "--concurrency", "--skip", "--time-limit", "--tls"])
        var devices = 200, nodes = 3, faults = 6, concurrency = 50, timeLimit = 1800
        var cluster = false
        var tls: String?
        var seed: UInt64 = 1
        var skipping: Set<String> = []
        while let argument = reader.next() {
            switch argument {
            case "--devices": devices = try reader.number(of: argument, in: 1...100_000)
            case "--nodes": nodes = try reader.number(of: argument, in: 2...16)
            case "--faults": faults = try reader.number(of: argument, in: 0...1000)
            case "--seed": seed = try reader.seed(of: argument)
            case "--concurrency": concurrency = try reader.number(of: argument, in: 1...1000)
            case "--time-limit": timeLimit = try reader.number(of: argument, in: 10...86_400)
            case "--cluster": cluster = true
            case "--tls": tls = try reader.value(of: argument)
            case "--skip":
                let kind = try reader.value(of: argument)
                let kinds = FleetCommand.Fault.allCases.map(\.option)
                guard kinds.contains(kind) else { throw reader.error("--skip takes one of \(kinds.joined(separator: ", ")), not '\(kind)'") }
                skipping.insert(kind)
            case _ where argument.hasPrefix("-"): throw reader.unknownOption(argument)
            default: throw reader.unexpected(argument)
            }
        }
        return .fleet(
            devices: devices, nodes: nodes, faults: faults, seed: seed, concurrency: concurrency, skipping: skipping, timeLimit: timeLimit,
            cluster: cluster, tls: tls)
    }

    private static func parseFleetNode(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "fleet-node", options: ["--redis-port", "--adobe", "--port", "--log"])
        var redisPort = 0, port = 0
        var cluster = false
        var adobe: String?, log: String?
        while let argument = reader.next() {
            switch argument {
            case "--redis-port": redisPort = try reader.number(of: argument, in: 1...65535)
            case "--cluster": cluster = true
            case "--port": port = try reader.number(of: argument, in: 1...65535)
            case "--adobe": adobe = try reader.value(of: argument)
            case "--log": log = try reader.value(of: argument)
            default: throw reader.unknownOption(argument)
            }
        }
        guard redisPort > 0, port > 0, let adobe, let log else { throw reader.error("give --redis-port, --adobe, --port and --log") }
        return .fleetNode(redisPort: UInt16(redisPort), cluster: cluster, adobe: adobe, port: UInt16(port), log: log)
    }

    private static func parseRun(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "run", options: ["--over-http", "--junit", "--html"])
        var overHTTP = false
        var junit: String?
        var html: String?
        var paths: [String] = []
        while let argument = reader.next() {
            switch argument {
            case "--over-http": overHTTP = true
            case "--junit": junit = try reader.value(of: argument)
            case "--html": html = try reader.value(of: argument)
            case _ where argument.hasPrefix("-"): throw reader.unknownOption(argument)
            default: paths.append(argument)
            }
        }
        guard !paths.isEmpty else { throw reader.error("give at least one PATH (a .scenario file or a folder)") }
        return .run(paths, overHTTP: overHTTP, junit: junit, html: html)
    }

    private static func parseRegister(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "register", options: ["--adobe", "--statement", "--store"])
        var adobe: String?, statement: String?, store: String?
        while let option = reader.next() {
            switch option {
            case "--adobe": adobe = try reader.value(of: option)
            case "--statement": statement = try reader.value(of: option)
            case "--store": store = try reader.value(of: option)
            default: throw reader.unexpected(option)
            }
        }
        guard let adobe, let statement, let store else { throw reader.error("give --adobe URL, --statement FILE and --store STORE") }
        guard store.hasPrefix("redis://") || store.hasPrefix("file:") else {
            throw reader.error("--store takes redis://HOST:PORT or file:PATH, not '\(store)'")
        }
        return .register(adobe: adobe, statement: statement, store: store)
    }

    private static func parseServe(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "serve", options: ["--port", "--world", "--no-throttle", "--quiet", "--max-connections"])
        var port: UInt16 = 8080
        var maxConnections = HTTPServerLimits().connections
        var world: String?
        var throttles = true
        var quiet = false
        while let option = reader.next() {
            switch option {
            case "--no-throttle": throttles = false
            case "--quiet": quiet = true
            case "--port": port = UInt16(try reader.number(of: option, in: 0...65535))
            case "--world": world = try reader.value(of: option)
            case "--max-connections": maxConnections = try reader.number(of: option, in: 1...100_000)
            default: throw reader.unexpected(option)
            }
        }
        return .serve(port: port, world: world, throttles: throttles, quiet: quiet, maxConnections: maxConnections)
    }

    private static func parseTrace(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "trace", options: ["--replay", "-o", "--output"])
        switch reader.next() {
        case "show":
            guard let file = reader.next() else { throw reader.error("give 'show TRACE'") }
            if let extra = reader.next() { throw reader.unexpected(extra) }
            return .showTrace(file)
        case "view":
            var trace: String?
            var output: String?
            var replay = false
            while let argument = reader.next() {
                switch argument {
                case "--replay": replay = true
                case "-o", "--output": output = try reader.value(of: argument)
                case _ where argument.hasPrefix("-"): throw reader.unknownOption(argument)
                case _ where trace == nil: trace = argument
                default: throw reader.unexpected(argument)
                }
            }
            guard let trace else { throw reader.error("give a TRACE file") }
            guard let output else { throw reader.error("give where to write the page: -o FILE.html") }
            return .viewTrace(trace, output: output, markingDivergence: replay)
        default:
            throw reader.error("give 'show TRACE' or 'view TRACE [--replay] -o FILE.html'")
        }
    }

    private static func parseRecord(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "record", options: ["-o", "--output"])
        var scenario: String?
        var output: String?
        var keepingPersonalData = false
        while let argument = reader.next() {
            switch argument {
            case "-o", "--output": output = try reader.value(of: argument)
            case "--keep-personal-data": keepingPersonalData = true
            case _ where argument.hasPrefix("-"): throw reader.unknownOption(argument)
            case _ where scenario == nil: scenario = argument
            default: throw reader.unexpected(argument)
            }
        }
        guard let scenario else { throw reader.error("give a SCENARIO file") }
        guard let output else { throw reader.error("give where to write the trace: -o TRACE") }
        return .record(scenario: scenario, output: output, keepingPersonalData: keepingPersonalData)
    }

    private static func parseReplay(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "replay", options: ["--expect-divergence", "--junit"])
        var expectDivergence = false
        var junit: String?
        var traces: [String] = []
        while let argument = reader.next() {
            switch argument {
            case "--expect-divergence": expectDivergence = true
            case "--junit": junit = try reader.value(of: argument)
            case _ where argument.hasPrefix("-"): throw reader.unknownOption(argument)
            default: traces.append(argument)
            }
        }
        guard !traces.isEmpty else { throw reader.error("give at least one TRACE") }
        return .replay(traces, expectDivergence: expectDivergence, junit: junit)
    }

    private static func parseChart(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "chart", options: ["--format", "--chart", "--write"])
        var format = StateChart.Format.mermaid
        var chart: String?
        var writeTo: String?
        while let option = reader.next() {
            switch option {
            case "--format":
                let value = try reader.value(of: option)
                let known = StateChart.Format.allCases.map(\.rawValue)
                guard let parsed = StateChart.Format(rawValue: value) else {
                    throw reader.error("unknown format " + UsageError.named(value, among: known) + " (\(known.joined(separator: ", ")))")
                }
                format = parsed
            case "--chart":
                let value = try reader.value(of: option)
                let known = ChartCommand.names
                guard known.contains(value) else {
                    throw reader.error("unknown chart " + UsageError.named(value, among: known) + " (\(known.joined(separator: ", ")))")
                }
                chart = value
            case "--write": writeTo = try reader.value(of: option)
            default: throw reader.unexpected(option)
            }
        }
        if writeTo != nil, format != .mermaid || chart != nil { throw reader.error("--write takes no --format or --chart") }
        if chart != nil, format != .mermaid { throw reader.error("--chart goes with --format mermaid") }
        return .chart(format: format, chart: chart, writeTo: writeTo)
    }

    private static func parseBench(_ arguments: [String]) throws(UsageError) -> Command {
        let kinds = ["engine", "gate", "json", "storage", "serve", "redis"]
        guard let kind = arguments.first, kinds.contains(kind) else {
            let reader = ArgumentReader(arguments, command: "bench", options: [])
            guard let given = arguments.first else { throw reader.error("give what to measure: engine, gate, json, storage, serve or redis") }
            throw reader.error("unknown benchmark " + UsageError.named(given, among: kinds) + " (engine, gate, json, storage, serve, redis)")
        }
        if kind == "gate" {
            var reader = ArgumentReader(
                arguments.dropFirst(), command: "bench gate", options: ["--write", "--margin", "--wall-margin", "--rounds"])
            var baseline: String?
            var write = false
            var margin = Int(((BenchGate.defaultCPUMargin - 1) * 100).rounded())
            var wallMargin = Int(((BenchGate.defaultWallMargin - 1) * 100).rounded())
            var rounds = BenchGate.defaultRounds
            while let argument = reader.next() {
                switch argument {
                case "--write": write = true
                case "--margin": margin = try reader.number(of: argument, in: 1...10_000)
                case "--wall-margin": wallMargin = try reader.number(of: argument, in: 1...10_000)
                case "--rounds": rounds = try reader.number(of: argument, in: 3...10_000)
                case let path where !path.hasPrefix("-") && baseline == nil: baseline = path
                default: throw reader.unexpected(argument)
                }
            }
            guard let baseline else { throw reader.error("give the baseline file (Tests/Benchmarks/gate.tsv)") }
            return .benchGate(baseline: baseline, write: write, marginPercent: margin, wallMarginPercent: wallMargin, rounds: rounds)
        }
        if kind == "redis" {
            var reader = ArgumentReader(arguments.dropFirst(), command: "bench redis", options: ["--seconds"])
            var seconds = 3
            while let option = reader.next() {
                switch option {
                case "--seconds": seconds = try reader.number(of: option, in: 1...600)
                default: throw reader.unexpected(option)
                }
            }
            return .benchRedis(seconds: seconds)
        }
        if kind == "engine" {
            var reader = ArgumentReader(
                arguments.dropFirst(), command: "bench engine", options: ["--sessions", "--seconds", "--only", "--sessions-child", "--compare"])
            var sessions = 100_000
            var seconds = 1
            var only: Set<String> = []
            var child = false
            var compare: String?
            while let option = reader.next() {
                switch option {
                case "--sessions": sessions = try reader.number(of: option, in: 1...10_000_000)
                case "--seconds": seconds = try reader.number(of: option, in: 1...600)
                case "--only":
                    let part = try reader.value(of: option)
                    guard EngineBenchmark.parts.contains(part) else {
                        throw reader.error(
                            "unknown part " + UsageError.named(part, among: EngineBenchmark.parts) + " ("
                                + EngineBenchmark.parts.joined(separator: ", ") + ")")
                    }
                    only.insert(part)
                case "--sessions-child":
                    sessions = try reader.number(of: option, in: 1...10_000_000)
                    child = true
                case "--compare": compare = try reader.value(of: option)
                default: throw reader.unexpected(option)
                }
            }
            return .benchEngine(sessions: sessions, seconds: Double(seconds), only: only, child: child, compare: compare)
        }
        if kind == "serve" {
            var reader = ArgumentReader(arguments.dropFirst(), command: "bench serve", options: ["--logins", "--clients"])
            var logins = 1000
            var clients = 50
            while let option = reader.next() {
                switch option {
                case "--logins": logins = try reader.number(of: option, in: 1...1_000_000)
                case "--clients": clients = try reader.number(of: option, in: 1...1_000_000)
                default: throw reader.unexpected(option)
                }
            }
            return .benchServe(logins: logins, clients: clients)
        }
        var reader = ArgumentReader(arguments.dropFirst(), command: "bench \(kind)", options: ["--rounds"])
        var rounds = 15
        while let option = reader.next() {
            switch option {
            case "--rounds": rounds = try reader.number(of: option, in: 1...1_000_000)
            default: throw reader.unexpected(option)
            }
        }
        return .bench(kind, rounds: rounds)
    }

    private static func parseCheck(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "check", options: ["--nodes", "--depth", "--calls", "--user", "--faults", "--second-screen", "--step-up", "--subscription", "--lost-writes", "--platform", "--authorize", "--preauthorize", "--late-answers", "--all"])
        var bounds = FleetChecker.Bounds()
        var all = false
        while let option = reader.next() {
            switch option {
            case "--all": all = true
            case "--second-screen": bounds.secondScreen = true
            case "--step-up": bounds.stepUp = true
            case "--lost-writes": bounds.lostWrites = true
            case "--subscription": bounds.subscription = true
            case "--platform": bounds.platform = true
            case "--authorize": bounds.authorize = true
            case "--preauthorize": bounds.preauthorize = true
            case "--late-answers": bounds.lateAnswers = true
            case "--nodes": bounds.nodes = try reader.number(of: option, in: 2...3)
            case "--depth": bounds.depth = try reader.number(of: option, in: 1...64)
            case "--calls": bounds.calls = try reader.number(of: option, in: 0...16)
            case "--user": bounds.userActions = try reader.number(of: option, in: 0...16)
            case "--faults": bounds.faults = try reader.number(of: option, in: 0...16)
            default: throw reader.unexpected(option)
            }
        }
        return .check(bounds, all: all)
    }

    private static func parseExplore(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "explore", options: ["--seeds", "--from", "--length", "--trace"])
        var seeds = 1000
        var from: UInt64 = 1
        var length = 40
        var trace: String?
        while let option = reader.next() {
            switch option {
            case "--seeds": seeds = try reader.number(of: option, in: 1...Int.max)
            case "--from": from = try reader.seed(of: option)
            case "--length": length = try reader.number(of: option, in: 1...10_000)
            case "--trace": trace = try reader.value(of: option)
            default: throw reader.unexpected(option)
            }
        }
        return .explore(seeds: seeds, from: from, length: length, trace: trace)
    }

    private static func parseFuzz(_ arguments: [String]) throws(UsageError) -> Command {
        var reader = ArgumentReader(arguments, command: "fuzz", options: ["--count", "--seed"])
        let targets = FuzzTargets.all.map(\.name)
        guard let target = reader.next() else { throw reader.error("give a target (\(targets.joined(separator: ", ")))") }
        guard targets.contains(target) else {
            throw reader.error("unknown target " + UsageError.named(target, among: targets) + " (\(targets.joined(separator: ", ")))")
        }
        var count = 10_000
        var seed: UInt64 = 1
        var child = false
        while let option = reader.next() {
            switch option {
            case "--child": child = true
            case "--count": count = try reader.number(of: option, in: 1...Int.max)
            case "--seed": seed = try reader.seed(of: option)
            default: throw reader.unexpected(option)
            }
        }
        return .fuzz(target: target, count: count, seed: seed, child: child)
    }
}
