import EntitlementEngine
import EntitlementScenarios
import Foundation

/// `entitle record`, `entitle replay` and `entitle trace show`.
struct TraceCommands {
    func record(_ scenarioFile: String, to output: String) async -> Int32 {
        do {
            let recorder = TraceRecorder(recordedWith: "entitle record \(EngineVersion.current)")
            let result = await ScenarioRunner().run(try ScenarioLibrary.load(scenarioFile), recorder: recorder)
            try recorder.trace.text.write(toFile: output, atomically: true, encoding: .utf8)
            if let failure = result.failure {
                print("recorded \(output) (\(recorder.trace.records.count) records), but the scenario failed:\n\(failure)")
                return 1
            }
            print("recorded \(output) (\(recorder.trace.records.count) records)")
            return 0
        } catch {
            StandardError.write("entitle record: \(error)\n")
            return 2
        }
    }

    func replay(_ files: [String]) -> Int32 {
        var failed = 0
        for file in files {
            do {
                let result = TraceReplayer().replay(try load(file))
                let note = result.machineMatches ? "" : "  (recorded by another machine definition)"
                if let divergence = result.divergence {
                    failed += 1
                    print("DIVERGED  \(file)\(note)\n\(divergence)")
                } else {
                    print("replayed  \(file)  (\(result.recordsReplayed) records)\(note)")
                }
            } catch {
                failed += 1
                print("REFUSED   \(file): \(error)")
            }
        }
        print("\(files.count - failed) replayed, \(failed) failed")
        return failed == 0 ? 0 : 1
    }

    func show(_ file: String) -> Int32 {
        do {
            let trace = try load(file)
            print(TraceTranscript.render(trace))
            return 0
        } catch {
            StandardError.write("entitle trace show: \(file): \(error)\n")
            return 1
        }
    }

    private func load(_ file: String) throws -> Trace {
        guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
            throw TraceCommandError.unreadable(file)
        }
        return try Trace.parse(text)
    }
}

enum TraceCommandError: Error, CustomStringConvertible {
    case unreadable(String)
    var description: String {
        switch self {
        case .unreadable(let file): "cannot read \(file) as UTF-8 text"
        }
    }
}
