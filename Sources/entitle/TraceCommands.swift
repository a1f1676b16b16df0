import EntitlementCommandLine
import EntitlementEngine
import EntitlementScenarios
import EntitlementTracing

/// `entitle record`, `entitle replay` and `entitle trace show`.
struct TraceCommands {
    func record(_ scenarioFile: String, to output: String, keepingPersonalData: Bool) async -> ExitStatus {
        let scenario: Scenario
        do {
            scenario = try CommandFile.scenario(scenarioFile)
        } catch {
            StandardError.write("entitle record: \(error)\n")
            return error.status
        }
        let recorder = TraceRecorder(recordedWith: "entitle record \(EngineVersion.current)", keepingPersonalData: keepingPersonalData)
        let result = await ScenarioRunner().run(scenario, recorder: recorder)
        do {
            try CommandFile.write(recorder.trace.text, to: output)
        } catch {
            StandardError.write("entitle record: \(error)\n")
            return error.status
        }
        if let failure = result.failure {
            print("recorded \(output) (\(recorder.trace.records.count) records), but the scenario failed:\n\(failure)")
            return .failure
        }
        print("recorded \(output) (\(recorder.trace.records.count) records)")
        if !scenario.engines.isEmpty || scenario.steps.contains(where: { if case .act(.restartEngine) = $0.kind { true } else { false } }) {
            print("note: a trace records one engine: main, up to its first restart (the other engines are not in it)")
        }
        return .success
    }

    /// Replays `files`; each must replay cleanly, or with `expectDivergence` each must diverge. Each file
    /// is replayed as it is read, a line at a time (memory stays flat however long the trace): a malformed
    /// line is reported where it is found, unless a divergence came first.
    func replay(_ files: [String], expectDivergence: Bool, junit: String?) -> ExitStatus {
        var report = JUnitReport(suite: expectDivergence ? "entitle replay --expect-divergence" : "entitle replay")
        var status = ExitStatus.success
        var unexpected = 0
        for file in files {
            let start = ContinuousClock.now
            let result: TraceReplayResult
            do throws(CommandFile.Problem) {
                try CommandFile.checkReadable(file)
                do throws(TraceError) {
                    result = try TraceReplayer().replay(contentsOfFile: file)
                } catch {
                    throw CommandFile.Problem(description: "\(file): \(error)", status: .invalidInput)
                }
            } catch {
                print("REFUSED   \(error.description)")
                report.cases.append(.init(name: file, file: file, seconds: 0, outcome: .error("refused", error.description)))
                status = status.worse(error.status)
                unexpected += 1
                continue
            }
            let elapsed = (ContinuousClock.now - start).components
            let seconds = Double(elapsed.seconds) + Double(elapsed.attoseconds) / 1e18
            let note = result.machineMatches ? "" : "  (recorded by another machine definition)"
            switch (result.divergence, expectDivergence) {
            case (let divergence?, false):
                print("DIVERGED  \(file)\(note)\n\(divergence)")
                report.cases.append(.init(name: file, file: file, seconds: seconds, outcome: .failed("diverged", "\(divergence)")))
                status = status.worse(.failure)
                unexpected += 1
            case (let divergence?, true):
                print("diverged as expected  \(file)\(note)\n\(divergence)")
                report.cases.append(.init(name: file, file: file, seconds: seconds, outcome: .passed))
            case (nil, false):
                print("replayed  \(file)  (\(result.recordsReplayed) records)\(note)")
                report.cases.append(.init(name: file, file: file, seconds: seconds, outcome: .passed))
            case (nil, true):
                print("REPLAYED  \(file)  (\(result.recordsReplayed) records), but it was expected to diverge\(note)")
                report.cases.append(
                    .init(name: file, file: file, seconds: seconds, outcome: .failed("replayed without divergence", "expected a divergence")))
                status = status.worse(.failure)
                unexpected += 1
            }
        }
        print(expectDivergence
            ? "\(files.count - unexpected) diverged as expected, \(unexpected) did not"
            : "\(files.count - unexpected) replayed, \(unexpected) failed")
        if let junit {
            do {
                try CommandFile.write(report.xml, to: junit)
            } catch {
                StandardError.write("entitle replay: \(error)\n")
                return status.worse(error.status)
            }
        }
        return status
    }

    func show(_ file: String) -> ExitStatus {
        do {
            print(TraceTranscript.render(try load(file)))
            return .success
        } catch {
            StandardError.write("entitle trace show: \(error.description)\n")
            return error.status
        }
    }

    /// Writes `file`'s page to `output` (``TraceView``).
    func view(_ file: String, to output: String, markingDivergence: Bool) -> ExitStatus {
        do {
            let page = TraceView.html(try load(file), markingDivergence: markingDivergence)
            try CommandFile.write(page, to: output)
            print("entitle trace view: \(output) (open it in a browser; it fetches nothing)")
            return .success
        } catch {
            StandardError.write("entitle trace view: \(error.description)\n")
            return error.status
        }
    }

    private func load(_ file: String) throws(CommandFile.Problem) -> Trace {
        let text = try CommandFile.read(file)
        do {
            return try Trace.parse(text)
        } catch {
            throw CommandFile.Problem(description: "\(file): \(error)", status: .invalidInput)
        }
    }
}
