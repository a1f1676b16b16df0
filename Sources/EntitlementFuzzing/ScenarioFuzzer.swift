import EntitlementScenarios

/// Fuzzes the scenario lexer, parser and runner with mutated scripts: a script is refused with
/// `file:line:column` errors or runs to a pass or a readable failure — never traps.
package enum ScenarioFuzzer {
    /// The `scenario` target.
    package static let target = FuzzTarget(
        name: "scenario", summary: "mutated scenario scripts: parse and run never trap",
        input: { text(seed: $0) }, run: { await check(seed: $0) })

    static func text(seed: UInt64) -> String {
        var random = FuzzRandom(seed: seed)
        return TextMutator.mutate(random.pick(FuzzCorpus.scenarios), &random)
    }

    static func check(seed: UInt64) async -> FuzzFailure? {
        let text = text(seed: seed)
        let scenario: Scenario
        do {
            scenario = try ScenarioParser.parse(text, file: "fuzz.scenario")
        } catch {
            let message = "\(error)"
            guard message.contains("fuzz.scenario:") else {
                return FuzzFailure(seed: seed, problem: "a parse error without file:line:column: \(message)", reproduction: text)
            }
            return nil
        }
        let result = await ScenarioRunner().run(scenario)
        if FuzzCorpus.scenarios.contains(text), !result.passed {
            return FuzzFailure(seed: seed, problem: "an unchanged corpus scenario failed: \(result.failure?.description ?? "")", reproduction: text)
        }
        return nil
    }
}
