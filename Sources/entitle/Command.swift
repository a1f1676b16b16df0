import EntitlementEngine
import EntitlementFuzzing

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands `entitle` understands (argument parsing is hand-written: no dependencies).
enum Command: Equatable {
    /// Run cookbook flows B to I against the embedded simulator.
    case demo
    /// Run scenario files and folders, in process or over HTTP.
    case run([String], overHTTP: Bool)
    /// Serve the simulator over HTTP.
    case serve(port: UInt16, world: String?, throttles: Bool, quiet: Bool)
    /// Save token sets to a file store in a loop until killed (the crash test's writer; not in usage).
    case storageStress(String)
    /// Start a login on a file store and print the redirect the web view reached, without handing
    /// it to the engine (the two-process session test's first process; not in usage).
    case sessionStart(String)
    /// Run a benchmark.
    case bench(String, rounds: Int)
    /// Time `entitle serve`'s start and `logins` logins against it from `clients` at once.
    case benchServe(logins: Int, clients: Int)
    /// Record a scenario run as a trace.
    case record(scenario: String, output: String)
    /// Replay traces against today's engine.
    case replay([String])
    /// Print a trace as a readable transcript.
    case showTrace(String)
    /// Print the charts generated from the transition table, or rewrite them in a folder.
    case chart(format: StateChart.Format, region: TransitionRow.Region?, writeTo: String?)
    /// Run `count` cases of a fuzz target from `seed`; `child` runs them here and reports each seed.
    case fuzz(target: String, count: Int, seed: UInt64, child: Bool)
    /// Run the random explorer on `seeds` seeds from `from`.
    case explore(seeds: Int, from: UInt64, length: Int)
    /// Print usage.
    case help

    /// A command line that could not be understood.
    struct UsageError: Error, Equatable {
        let message: String
    }

    static let usage = """
        usage: entitle COMMAND

        commands:
          demo      run cookbook flows B to I against the embedded simulator
                    and print the transcript (secrets shortened)
          run [--over-http] PATH...
                    run .scenario files (folders are searched recursively): one line per
                    scenario, a report for each failure, then "N passed, N failed";
                    exit status 1 if any failed. --over-http: the engine talks REST API V2
                    over HTTP to the simulator served on an ephemeral loopback port
          serve [--port N] [--world FILE] [--no-throttle] [--quiet]
                    serve the simulator on http://127.0.0.1:N (default 8080; 0 picks a free
                    port): REST API V2, client registration, the MVPDs' login and logout
                    pages and the second screen's /activate page; prints its URL and the
                    world's users, one access-log line per request (secrets shortened;
                    --quiet: none); stops cleanly on Ctrl-C or SIGTERM. A world FILE holds
                    scenario-language declarations (world, requestor, mvpd, user, set
                    session-ttl)
          record SCENARIO -o TRACE
                    run a scenario and write its trace (JSON Lines, secrets as placeholders)
          replay TRACE...
                    replay every trace against this engine (each stops at its first
                    divergence); exit status 1 if any diverged
          trace show TRACE
                    print a trace as a readable transcript
          chart [--format mermaid|dot|scxml] [--region REGION]
                    print the state charts generated from the machine's transition table
                    (regions: configuration, authentication, authorization, calls)
          chart --write DIR
                    rewrite the mermaid block of DIR/<region>.md for every region
          bench json [--rounds N]
                    time the canonical trace writer against JSONEncoder on the same records
                    (build with -c release for numbers worth quoting)
          bench storage [--rounds N]
                    time calls on an engine whose file store holds 2,000 authorizations:
                    the stored version checked per input against a full read per input
          bench serve [--logins N] [--clients C]
                    time entitle serve's start, then N whole logins (default 1000) from C
                    concurrent clients (default 50) against it over loopback HTTP
          explore [--seeds N] [--from S] [--length L]
                    drive the engine through N random sequences (default 1000) of L steps
                    (default 40, at most 10000) from seed S (default 1) and check its invariants: exactly
                    once, listed transitions, nothing after the end, refusals change nothing,
                    a fresh login works, the trace replays; at the first failure, print its
                    seed and a shortened script and exit 1
          fuzz TARGET [--count N] [--seed S]
                    run N cases (default 10000) of a fuzz target from seed S (default 1):
                    url, trace, scenario, token-file; the cases run in a child process, so
                    a crash is reported too; prints the first failing seed and its input
                    and exits 1
          help      print this text
        """

    static func parse(_ arguments: [String]) -> Result<Command, UsageError> {
        guard let first = arguments.first else { return .failure(UsageError(message: "entitle: no command given")) }
        let rest = arguments.dropFirst()
        if rest.contains("--help") || rest.contains("-h") { return .success(.help) }
        switch first {
        case "demo":
            guard rest.isEmpty else { return .failure(UsageError(message: "entitle demo: unexpected '\(rest.first!)'")) }
            return .success(.demo)
        case "run":
            let overHTTP = rest.contains("--over-http")
            let paths = rest.filter { $0 != "--over-http" }
            guard !paths.isEmpty else { return .failure(UsageError(message: "entitle run: give at least one PATH")) }
            if let option = paths.first(where: { $0.hasPrefix("-") }) {
                return .failure(UsageError(message: "entitle run: unknown option '\(option)'"))
            }
            return .success(.run(paths, overHTTP: overHTTP))
        case "serve":
            return parseServe(Array(rest))
        case "storage-stress":
            guard rest.count == 1 else { return .failure(UsageError(message: "entitle storage-stress: give a folder")) }
            return .success(.storageStress(rest.first!))
        case "session-start":
            guard rest.count == 1 else { return .failure(UsageError(message: "entitle session-start: give a folder")) }
            return .success(.sessionStart(rest.first!))
        case "bench" where rest.first == "serve":
            var logins = 1000
            var clients = 50
            var options = rest.dropFirst()
            while let option = options.popFirst() {
                guard let value = options.popFirst().flatMap(Int.init), value > 0, value <= 1_000_000 else {
                    return .failure(UsageError(message: "entitle bench serve: \(option) takes a whole number from 1 to 1000000"))
                }
                switch option {
                case "--logins": logins = value
                case "--clients": clients = value
                default: return .failure(UsageError(message: "entitle bench serve: unknown option '\(option)'"))
                }
            }
            return .success(.benchServe(logins: logins, clients: clients))
        case "bench":
            let parts = Array(rest)
            let usage = "entitle bench: usage: entitle bench json|storage [--rounds N]"
            guard let which = parts.first, ["json", "storage"].contains(which) else {
                return .failure(UsageError(message: usage))
            }
            var rounds = 15
            if parts.count == 3, parts[1] == "--rounds", let value = Int(parts[2]), value > 0 {
                rounds = value
            } else if parts.count != 1 {
                return .failure(UsageError(message: usage))
            }
            return .success(.bench(which, rounds: rounds))
        case "record":
            let parts = Array(rest)
            guard parts.count == 3, parts[1] == "-o" || parts[1] == "--output" else {
                return .failure(UsageError(message: "entitle record: usage: entitle record SCENARIO -o TRACE"))
            }
            return .success(.record(scenario: parts[0], output: parts[2]))
        case "replay":
            guard !rest.isEmpty else { return .failure(UsageError(message: "entitle replay: give at least one TRACE")) }
            return .success(.replay(Array(rest)))
        case "trace":
            guard rest.count == 2, rest.first == "show" else {
                return .failure(UsageError(message: "entitle trace: usage: entitle trace show TRACE"))
            }
            return .success(.showTrace(rest.last!))
        case "chart":
            return parseChart(Array(rest))
        case "explore":
            return parseExplore(Array(rest))
        case "fuzz":
            return parseFuzz(Array(rest))
        case "help", "-h", "--help":
            return .success(.help)
        default:
            return .failure(UsageError(message: "entitle: unknown command '\(first)'"))
        }
    }
}

extension Command {
    static func parseChart(_ arguments: [String]) -> Result<Command, UsageError> {
        var format = StateChart.Format.mermaid
        var region: TransitionRow.Region?
        var writeTo: String?
        var rest = arguments[...]
        while let option = rest.popFirst() {
            guard let value = rest.popFirst() else {
                return .failure(UsageError(message: "entitle chart: '\(option)' needs a value"))
            }
            switch option {
            case "--format":
                guard let parsed = StateChart.Format(rawValue: value) else {
                    return .failure(UsageError(message: "entitle chart: unknown format '\(value)' (mermaid, dot, scxml)"))
                }
                format = parsed
            case "--region":
                guard let parsed = TransitionRow.Region(rawValue: value) else {
                    let known = TransitionRow.Region.allCases.map(\.rawValue).joined(separator: ", ")
                    return .failure(UsageError(message: "entitle chart: unknown region '\(value)' (\(known))"))
                }
                region = parsed
            case "--write":
                writeTo = value
            default:
                return .failure(UsageError(message: "entitle chart: unknown option '\(option)'"))
            }
        }
        if writeTo != nil, format != .mermaid || region != nil {
            return .failure(UsageError(message: "entitle chart: --write takes no --format or --region"))
        }
        if region != nil, format != .mermaid {
            return .failure(UsageError(message: "entitle chart: --region goes with --format mermaid"))
        }
        return .success(.chart(format: format, region: region, writeTo: writeTo))
    }
}

extension Command {
    static func parseServe(_ arguments: [String]) -> Result<Command, UsageError> {
        var port: UInt16 = 8080
        var world: String?
        var throttles = true
        var quiet = false
        var rest = arguments[...]
        do throws(UsageError) {
            while let option = rest.popFirst() {
                switch option {
                case "--no-throttle": throttles = false
                case "--quiet": quiet = true
                case "--port":
                    let value = try Self.value(of: option, from: &rest, in: "serve")
                    guard let number = UInt16(value) else { throw UsageError(message: "entitle serve: --port takes 0 to 65535") }
                    port = number
                case "--world": world = try Self.value(of: option, from: &rest, in: "serve")
                default: throw UsageError(message: "entitle serve: unknown option '\(option)'")
                }
            }
        } catch {
            return .failure(error)
        }
        return .success(.serve(port: port, world: world, throttles: throttles, quiet: quiet))
    }

    static func parseFuzz(_ arguments: [String]) -> Result<Command, UsageError> {
        var rest = arguments[...]
        let targets = FuzzTargets.all.map(\.name)
        guard let target = rest.popFirst(), targets.contains(target) else {
            return .failure(UsageError(message: "entitle fuzz: give a target (\(targets.joined(separator: ", ")))"))
        }
        var count = 10_000
        var seed: UInt64 = 1
        var child = false
        do throws(UsageError) {
            while let option = rest.popFirst() {
                if option == "--child" {
                    child = true
                    continue
                }
                let value = try Self.value(of: option, from: &rest, in: "fuzz")
                switch option {
                case "--count": count = try Self.count(value, for: option, in: "fuzz")
                case "--seed": seed = try Self.seed(value, for: option, in: "fuzz")
                default: throw UsageError(message: "entitle fuzz: unknown option '\(option)'")
                }
            }
        } catch {
            return .failure(error)
        }
        return .success(.fuzz(target: target, count: count, seed: seed, child: child))
    }

    static func parseExplore(_ arguments: [String]) -> Result<Command, UsageError> {
        var seeds = 1000
        var from: UInt64 = 1
        var length = 40
        var rest = arguments[...]
        do throws(UsageError) {
            while let option = rest.popFirst() {
                guard option.hasPrefix("--") else { throw UsageError(message: "entitle explore: unexpected '\(option)'") }
                let value = try Self.value(of: option, from: &rest, in: "explore")
                switch option {
                case "--seeds": seeds = try Self.count(value, for: option, in: "explore")
                case "--from": from = try Self.seed(value, for: option, in: "explore")
                case "--length":
                    guard let number = Int(value), (1...10_000).contains(number) else {
                        throw UsageError(message: "entitle explore: --length takes 1 to 10000")
                    }
                    length = number
                default: throw UsageError(message: "entitle explore: unknown option '\(option)'")
                }
            }
        } catch {
            return .failure(error)
        }
        return .success(.explore(seeds: seeds, from: from, length: length))
    }

    /// The value following `option`.
    private static func value(of option: String, from rest: inout ArraySlice<String>, in command: String) throws(UsageError) -> String {
        guard let value = rest.popFirst() else { throw UsageError(message: "entitle \(command): '\(option)' needs a value") }
        return value
    }

    /// `value` as a count of 1 or more.
    private static func count(_ value: String, for option: String, in command: String) throws(UsageError) -> Int {
        guard let number = Int(value), number > 0 else {
            throw UsageError(message: "entitle \(command): \(option) takes a whole number from 1 to \(Int.max)")
        }
        return number
    }

    /// `value` as a seed.
    private static func seed(_ value: String, for option: String, in command: String) throws(UsageError) -> UInt64 {
        guard let number = UInt64(value) else { throw UsageError(message: "entitle \(command): \(option) takes a seed (0 or more)") }
        return number
    }
}

/// Writes to standard error.
enum StandardError {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
