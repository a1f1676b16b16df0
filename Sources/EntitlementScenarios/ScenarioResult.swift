import EntitlementEngine

/// Why a scenario failed: the script line, what it expected, what happened, and what came just before.
public struct ScenarioFailure: Sendable, Hashable, CustomStringConvertible {
    /// The file.
    package var file: String
    /// The failing line (the last line for failures at the end of the script).
    package var line: Int
    /// The step as written, or "end of script".
    package var step: String
    /// What the step expected.
    package var expected: String
    /// What happened instead.
    package var actual: String
    /// The callbacks (and steps) just before the failure, oldest first.
    package var context: [String]

    /// The report printed by `entitle run` and test failures.
    public var description: String {
        var lines = [
            "\(file):\(line): scenario failed", "  step:     \(step)", "  expected: \(expected)",
            "  actual:   \(actual)",
        ]
        if !context.isEmpty {
            lines.append("  just before:")
            lines += context.map { "    \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}

/// The outcome of one scenario run.
public struct ScenarioResult: Sendable {
    /// The scenario's name.
    public var name: String
    /// Its file.
    package var file: String
    /// The failure, or nil when every step passed.
    public var failure: ScenarioFailure?
    /// Wall-clock time the run took, in milliseconds (the engine itself ran on a manual clock).
    package var milliseconds: Int
    /// The machine's transitions the run went through (for the charts' coverage check).
    package var transitionsExercised: Set<TransitionRow>
    /// Every secret the simulator minted during the run, so tests can prove none reached a trace or report.
    package var secretsMinted: [String]

    /// True when the scenario passed.
    public var passed: Bool { failure == nil }
}
