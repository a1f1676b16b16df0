import EntitlementCommandLine
import EntitlementBenchmarks
import EntitlementFleet
import EntitlementEngine
import EntitlementTracing

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `entitle COMMAND [ARGS]`: the EntitlementEngine command-line tool.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: ExitStatus
switch Command.parse(arguments) {
case .success(.demo):
    status = await Demo().run() == 0 ? .success : .failure
case .success(.run(let paths, let overHTTP, let junit, let html)):
    status = await RunCommand(transport: overHTTP ? .http : .inProcess, junit: junit, html: html).run(paths)
case .success(.serve(let port, let world, let throttles, let quiet, let maxConnections)):
    status = await ServeCommand(port: port, worldFile: world, throttles: throttles, quiet: quiet, maxConnections: maxConnections).run()
case .success(.register(let adobe, let statement, let store)):
    status = await RegisterCommand(adobe: adobe, statementFile: statement, store: store).run()
case .success(.sessionStart(let store, let stay)):
    status = ExitStatus(rawValue: await SessionStart.run(store: store, stay: stay)) ?? .failure
case .success(.storageStress(let folder)):
    status = ExitStatus(rawValue: await StorageStress.run(folder: folder)) ?? .failure
case .success(.benchServe(let logins, let clients)):
    status = await ServeBenchmark(logins: logins, clients: clients).run() == 0 ? .success : .failure
case .success(.benchGate(let baseline, let write, let margin, let wallMargin, let rounds)):
    status = await GateCommand(baseline: baseline, marginPercent: margin, wallMarginPercent: wallMargin, rounds: rounds).run(write: write)
case .success(.benchRedis(let seconds)):
    status = await RedisBenchmark(seconds: seconds).run()
case .success(.benchEngine(let sessions, _, _, true, _)):
    status = await BenchSessions.run(sessions: sessions) == 0 ? .success : .failure
case .success(.benchEngine(let sessions, let seconds, let only, false, let compare)):
    do throws(CommandFile.Problem) {
        let saved = try compare.map(CommandFile.read)
        status = await EngineBenchmark(sessions: sessions, seconds: seconds, only: only, saved: saved).run() == 0 ? .success : .failure
    } catch {
        StandardError.write("entitle bench engine: \(error)\n")
        status = error.status
    }
case .success(.bench("storage", let rounds)):
    status = await StorageBenchmark().run(rounds: rounds) == 0 ? .success : .failure
case .success(.bench(_, let rounds)):
    status = await JSONBenchmark().run(rounds: rounds) == 0 ? .success : .failure
case .success(.record(let scenario, let output, let keepingPersonalData)):
    status = await TraceCommands().record(scenario, to: output, keepingPersonalData: keepingPersonalData)
case .success(.replay(let traces, let expectDivergence, let junit)):
    status = TraceCommands().replay(traces, expectDivergence: expectDivergence, junit: junit)
case .success(.showTrace(let trace)):
    status = TraceCommands().show(trace)
case .success(.viewTrace(let trace, let output, let markingDivergence)):
    status = TraceCommands().view(trace, to: output, markingDivergence: markingDivergence)
case .success(.chart(let format, let chart, let writeTo)):
    status = ChartCommand().run(format: format, chart: chart, writeTo: writeTo)
case .success(.fuzz(let target, let count, let seed, let child)):
    status = await FuzzCommand.run(target: target, count: count, seed: seed, child: child) == 0 ? .success : .failure
case .success(.fleet(let devices, let nodes, let faults, let seed, let concurrency, let skipping, let timeLimit, let cluster, let tls)):
    status = await FleetCommand(
        devices: devices, nodes: nodes, faultsPerKind: faults, seed: seed, concurrency: concurrency, skipping: skipping,
        timeLimit: .seconds(timeLimit), cluster: cluster, tls: tls
    ).run()
case .success(.fleetNode(let redisPort, let cluster, let adobe, let port, let log)):
    status = await FleetNode.run(redisPort: redisPort, cluster: cluster, adobe: adobe, port: port, log: log)
case .success(.explore(let seeds, let from, let length, let trace)):
    status = await ExploreCommand.run(seeds: seeds, from: from, length: length, trace: trace) == 0 ? .success : .failure
case .success(.check(let bounds, let all)):
    status = CheckCommand.run(bounds, all: all) ? .success : .failure
case .success(.help(nil)):
    print(CommandHelp.overview)
    status = .success
case .success(.help(let name?)):
    print(CommandHelp.named(name)?.text ?? CommandHelp.overview)
    status = .success
case .success(.version):
    print("entitle \(EngineVersion.current) (EntitlementEngine \(EngineVersion.current), trace format \(Trace.formatMajor).\(Trace.formatMinor))")
    status = .success
case .failure(let error):
    StandardError.write(error.report)
    status = .usage
}
exit(status.rawValue)
