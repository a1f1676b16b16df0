import EntitlementScenarios

/// `entitle run [--over-http] PATH...`: runs scenario files and prints one line each, the failure
/// reports and a summary.
struct RunCommand {
    /// How the engine reaches the simulator.
    var transport: ScenarioRunner.Transport = .inProcess

    func run(_ paths: [String]) async -> Int32 {
        let files: [String]
        do {
            files = try ScenarioLibrary.files(at: paths)
        } catch {
            StandardError.write("entitle run: \(error)\n")
            return 2
        }
        guard !files.isEmpty else {
            StandardError.write("entitle run: no .scenario files in \(paths.joined(separator: " "))\n")
            return 2
        }
        var passed = 0
        var failures: [String] = []
        for file in files {
            do {
                let result = await ScenarioRunner(transport: transport).run(try ScenarioLibrary.load(file))
                if let failure = result.failure {
                    print("FAIL  \(result.name)  (\(result.milliseconds) ms)")
                    failures.append(failure.description)
                } else {
                    print("pass  \(result.name)  (\(result.milliseconds) ms)")
                    passed += 1
                }
            } catch {
                print("FAIL  \(file)  (not parsed)")
                failures.append("\(error)")
            }
        }
        for failure in failures { print("\n" + failure) }
        print("\n\(passed) passed, \(failures.count) failed")
        return failures.isEmpty ? 0 : 1
    }
}
