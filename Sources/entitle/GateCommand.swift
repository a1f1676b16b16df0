import EntitlementBenchmarks
import EntitlementCommandLine
import Foundation

/// `entitle bench gate BASELINE`: today's same-run ratios against the committed baseline, or
/// (`--write`) a new baseline measured here.
struct GateCommand {
    /// The baseline file (`Tests/Benchmarks/gate.tsv`).
    let baseline: String
    /// How much worse than the baseline a CPU ratio may be, in percent.
    let marginPercent: Int
    /// How much worse a wall-clock ratio may be, in percent.
    let wallMarginPercent: Int
    /// Alternating rounds per measurement.
    let rounds: Int

    func run(write: Bool) async -> ExitStatus {
        let gate = BenchGate(rounds: rounds, cpuMargin: 1 + Double(marginPercent) / 100, wallMargin: 1 + Double(wallMarginPercent) / 100)
        if EngineBenchmark.isDebugBuild { print("entitle bench gate: DEBUG BUILD — the baseline is a release build's; use -c release") }
        print(EngineBenchmark.loadLine)
        if write { return await writeBaseline(gate) }
        let committed: BenchGate.Baseline
        do throws(CommandFile.Problem) {
            switch BenchGate.Baseline.parse(try CommandFile.read(baseline)) {
            case .success(let read): committed = read
            case .failure(let problem):
                StandardError.write("entitle bench gate: \(baseline): \(problem.message)\n")
                return .invalidInput
            }
        } catch {
            StandardError.write("entitle bench gate: \(error)\n")
            return error.status
        }
        guard let passed = await gate.check(against: committed) else { return .failure }
        print(
            passed
                ? "every figure within its margins of the baseline (CPU \(marginPercent) %, wall clock \(wallMarginPercent) %)"
                : "a figure is past its margin of the baseline (CPU \(marginPercent) %, wall clock \(wallMarginPercent) %)")
        return passed ? .success : .failure
    }

    /// Measures each figure three times and writes the medians.
    private func writeBaseline(_ gate: BenchGate) async -> ExitStatus {
        guard let measured = await gate.measure(attempts: 3) else { return .failure }
        var ratios: [String: BenchGate.Ratios] = [:]
        for (name, values) in measured {
            let cpu = values.map(\.cpu).sorted(), wall = values.map(\.wall).sorted()
            ratios[name] = BenchGate.Ratios(cpu: cpu[cpu.count / 2], wall: wall[wall.count / 2])
            print("\(name): \(values.map { String(format: "%.3f, %.3f", $0.cpu, $0.wall) }.joined(separator: "; "))")
        }
        let header = [
            "entitle bench gate's baseline: figure<TAB>CPU ratio<TAB>wall-clock ratio (each the median of three",
            "measurements, each the ratio of medians over \(rounds) alternating rounds). Written by `swift run -c release entitle bench gate",
            "\(baseline) --write` on \(ProcessInfo.processInfo.activeProcessorCount) cores; \(EngineBenchmark.loadLine).",
            "A change that costs speed on purpose writes it again, with the reason in Changes.",
        ]
        let text = BenchGate.Baseline(ratios: ratios).text(order: BenchGate.names, header: header)
        do {
            try text.write(toFile: baseline, atomically: true, encoding: .utf8)
        } catch {
            StandardError.write("entitle bench gate: \(baseline): cannot be written\n")
            return .cannotCreate
        }
        print("wrote \(baseline)")
        return .success
    }
}
