import EntitlementCommandLine
import EntitlementEngine
import EntitlementFuzzing
import EntitlementScenarios
import EntitlementTracing
import Foundation

/// `entitle run [--over-http] [--junit FILE] [--html DIR] PATH...`: runs scenario files and prints one
/// line each, the failure reports and a summary; optionally the results as JUnit XML, and for each
/// failing scenario the page of its run (``TraceView``) in DIR.
struct RunCommand {
    /// How the engine reaches the simulator.
    var transport: ScenarioRunner.Transport = .inProcess
    /// Where to write JUnit XML, if anywhere.
    var junit: String?
    /// Where to write a failing scenario's page, if anywhere.
    var html: String?

    func run(_ paths: [String]) async -> ExitStatus {
        let files: [String]
        do {
            files = try ScenarioLibrary.files(at: paths)
        } catch {
            StandardError.write("entitle run: \(error)\n")
            return .noInput
        }
        guard !files.isEmpty else {
            StandardError.write("entitle run: no .scenario files in \(paths.joined(separator: " "))\n")
            return .noInput
        }
        var report = JUnitReport(suite: "entitle run")
        var reports: [String] = []
        var status = ExitStatus.success
        for file in files {
            let scenario: Scenario
            do {
                let text = try CommandFile.read(file)
                if FleetScript.isFleetScript(text) {
                    let (outcome, text) = Self.runFleetScript(text, file: file)
                    report.cases.append(outcome)
                    if let text { reports.append(text) }
                    switch outcome.outcome {
                    case .passed: break
                    case .failed: status = status.worse(.failure)
                    case .error: status = status.worse(.invalidInput)
                    }
                    continue
                }
                scenario = try ScenarioParser.parse(text, file: file)
            } catch let problem as CommandFile.Problem {
                print("FAIL  \(file)  (not read)")
                reports.append(problem.description)
                report.cases.append(.init(name: file, file: file, seconds: 0, outcome: .error(problem.description, problem.description)))
                status = status.worse(problem.status)
                continue
            } catch {
                let count = (error as? ScenarioParseError)?.count ?? 1
                print("FAIL  \(file)  (not parsed: \(count) error\(count == 1 ? "" : "s"))")
                reports.append("\(error)")
                report.cases.append(
                    .init(name: file, file: file, seconds: 0, outcome: .error("\(count) parse error\(count == 1 ? "" : "s")", "\(error)")))
                status = status.worse(.invalidInput)
                continue
            }
            let recorder = html == nil ? nil : TraceRecorder(recordedWith: "entitle run \(EngineVersion.current)")
            let result = await ScenarioRunner(transport: transport).run(scenario, recorder: recorder)
            let seconds = Double(result.milliseconds) / 1000
            if let failure = result.failure {
                print("FAIL  \(result.name)  (\(result.milliseconds) ms)")
                reports.append(failure.description)
                if let html, let recorder {
                    status = status.worse(writePage(of: recorder.trace, failure: failure.description, scenario: file, into: html))
                }
                report.cases.append(
                    .init(
                        name: result.name, file: file, seconds: seconds,
                        outcome: .failed("line \(failure.line): expected \(failure.expected)", failure.description)))
                status = status.worse(.failure)
            } else {
                print("pass  \(result.name)  (\(result.milliseconds) ms)")
                report.cases.append(.init(name: result.name, file: file, seconds: seconds, outcome: .passed))
            }
        }
        for text in reports { print("\n" + text) }
        let passed = report.cases.filter { if case .passed = $0.outcome { true } else { false } }.count
        let unusable = report.cases.filter { if case .error = $0.outcome { true } else { false } }.count
        let failed = report.cases.count - passed - unusable
        print("\n\(passed) passed, \(failed) failed" + (unusable > 0 ? ", \(unusable) not run (unreadable or invalid)" : ""))
        if let junit {
            do {
                try CommandFile.write(report.xml, to: junit)
            } catch {
                StandardError.write("entitle run: \(error)\n")
                return status.worse(error.status)
            }
        }
        return status
    }

    /// Plays a fleet script (`entitle check`'s counterexample, ``FleetScript``) and prints its line: its
    /// outcome, and the report of a failure.
    private static func runFleetScript(_ text: String, file: String) -> (JUnitReport.Case, String?) {
        let script: FleetScript
        do throws(FleetScriptError) {
            script = try FleetScript(parsing: text)
        } catch {
            print("FAIL  \(file)  (not parsed: 1 error)")
            let text = "\(file):\(error.line): error: \(error.message)"
            return (.init(name: file, file: file, seconds: 0, outcome: .error("1 parse error", text)), text)
        }
        let clock = ContinuousClock()
        let started = clock.now
        let failure = script.run()
        let elapsed = clock.now - started
        let milliseconds = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
        guard let failure else {
            print("pass  \(file)  (\(milliseconds) ms)")
            return (.init(name: file, file: file, seconds: Double(milliseconds) / 1000, outcome: .passed), nil)
        }
        print("FAIL  \(file)  (\(milliseconds) ms)")
        let text = "\(file): \(failure)"
        return (.init(name: file, file: file, seconds: Double(milliseconds) / 1000, outcome: .failed(failure.prefix { $0 != "\n" }.description, text)), text)
    }

    /// Writes the page of a failing scenario's run into `folder` (`NAME.html` for `NAME.scenario`; the
    /// folder is made if it is missing) and prints where; the exit status it adds (a folder that cannot
    /// take it).
    private func writePage(of trace: Trace, failure: String, scenario file: String, into folder: String) -> ExitStatus {
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let name = ((file as NSString).lastPathComponent as NSString).deletingPathExtension + ".html"
        let path = (folder as NSString).appendingPathComponent(name)
        do {
            try CommandFile.write(TraceView.html(trace, headline: "The scenario \(file) failed:\n\(failure)"), to: path)
            print("      its run as a page: \(path)")
            return .success
        } catch {
            StandardError.write("entitle run: \(error)\n")
            return error.status
        }
    }
}
