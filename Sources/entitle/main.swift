#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `entitle COMMAND [ARGS]`: the EntitlementEngine command-line tool.
let arguments = Array(CommandLine.arguments.dropFirst())
switch Command.parse(arguments) {
case .success(.demo):
    exit(await Demo().run())
case .success(.run(let paths, let overHTTP)):
    exit(await RunCommand(transport: overHTTP ? .http : .inProcess).run(paths))
case .success(.serve(let port, let world, let throttles, let quiet)):
    exit(await ServeCommand(port: port, worldFile: world, throttles: throttles, quiet: quiet).run())
case .success(.sessionStart(let folder)):
    exit(await SessionStart.run(folder: folder))
case .success(.storageStress(let folder)):
    exit(await StorageStress.run(folder: folder))
case .success(.benchServe(let logins, let clients)):
    exit(await ServeBenchmark(logins: logins, clients: clients).run())
case .success(.bench("storage", let rounds)):
    exit(await StorageBenchmark().run(rounds: rounds))
case .success(.bench(_, let rounds)):
    exit(await JSONBenchmark().run(rounds: rounds))
case .success(.record(let scenario, let output)):
    exit(await TraceCommands().record(scenario, to: output))
case .success(.replay(let traces)):
    exit(TraceCommands().replay(traces))
case .success(.showTrace(let trace)):
    exit(TraceCommands().show(trace))
case .success(.chart(let format, let region, let writeTo)):
    exit(ChartCommand().run(format: format, region: region, writeTo: writeTo))
case .success(.fuzz(let target, let count, let seed, let child)):
    exit(await FuzzCommand.run(target: target, count: count, seed: seed, child: child))
case .success(.explore(let seeds, let from, let length)):
    exit(await ExploreCommand.run(seeds: seeds, from: from, length: length))
case .success(.help):
    print(Command.usage)
    exit(0)
case .failure(let error):
    StandardError.write(error.message + "\n\n" + Command.usage + "\n")
    exit(2)
}
