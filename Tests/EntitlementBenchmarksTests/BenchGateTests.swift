import EntitlementBenchmarks
import Foundation
import EntitlementTestSupport
import Testing

/// The speed gate's baseline file and verdicts (its timing runs in `.ci/run`, on the release build).
@Suite struct BenchGateTests {
    @Test func aBaselineReadsBackAsWritten() throws {
        let baseline = BenchGate.Baseline(ratios: [
            "machine.session-inputs/reference": .init(cpu: 0.41, wall: 0.412), "sha256.1MiB/reference": .init(cpu: 47.278, wall: 47.5),
        ])
        let text = baseline.text(order: BenchGate.names, header: ["a header", "of two lines"])
        #expect(text.hasPrefix("# a header\n# of two lines\nmachine.session-inputs/reference\t0.410\t0.412\n"))
        try expectEqual(BenchGate.Baseline.parse(text).get(), baseline)
    }

    @Test func theCommittedBaselineNamesEveryFigure() throws {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Benchmarks/gate.tsv").path
        let baseline = try BenchGate.Baseline.parse(String(contentsOfFile: path, encoding: .utf8)).get()
        expectEqual(Set(baseline.ratios.keys), Set(BenchGate.names))
    }

    @Test(arguments: [
        "machine\t0.4", "machine\t0.4\tfast", "machine\t-1\t0.4", "machine\tnan\t0.4", "machine 0.4 0.4", "machine\t0.4\t0.4\t0.4",
    ])
    func aLineThatIsNotAFiguresIsNamed(line: String) {
        let text = "# header\n\(line)\n"
        guard case .failure(let error) = BenchGate.Baseline.parse(text) else {
            Issue.record("\(line) was read")
            return
        }
        #expect(error.message.hasPrefix("line 2 is not"))
    }

    @Test func aFigurePassesWhenSomeMeasurementIsWithinEachMargin() {
        let gate = BenchGate(cpuMargin: 1.5, wallMargin: 5)
        let committed = BenchGate.Ratios(cpu: 1, wall: 1)
        #expect(gate.judge([.init(cpu: 1.49, wall: 4.9)], against: committed).passes)
        // A noisy first measurement, a quiet second: a slowdown would have stayed.
        #expect(gate.judge([.init(cpu: 1.8, wall: 1), .init(cpu: 1.1, wall: 1)], against: committed).passes)
        let moreCPU = gate.judge([.init(cpu: 1.6, wall: 1), .init(cpu: 1.7, wall: 1), .init(cpu: 1.51, wall: 1)], against: committed)
        #expect(!moreCPU.passes && !moreCPU.cpuWithin && moreCPU.wallWithin)
        let waiting = gate.judge([.init(cpu: 1, wall: 5.1)], against: committed)
        #expect(!waiting.passes && waiting.cpuWithin && !waiting.wallWithin)
        #expect(!gate.judge([], against: committed).passes, "nothing measured passes nothing")
    }
}
