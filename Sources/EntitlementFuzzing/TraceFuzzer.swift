import EntitlementEngine
import EntitlementTracing

/// Fuzzes the trace reader, the replayer and the transcript with mutated recorded traces: each
/// either refuses the trace with a typed error or replays and prints it — never traps.
package enum TraceFuzzer {
    /// The `trace` target.
    package static let target = FuzzTarget(
        name: "trace", summary: "mutated recorded traces: parse, replay and transcript never trap",
        input: { seed in mutated(seed, corpus: await FuzzCorpus.traces.value) }, run: { await check(seed: $0) })

    static func mutated(_ seed: UInt64, corpus: [String]) -> String {
        var random = FuzzRandom(seed: seed)
        guard !corpus.isEmpty else { return "" }
        return TextMutator.mutate(random.pick(corpus), &random)
    }

    static func check(seed: UInt64) async -> FuzzFailure? {
        let corpus = await FuzzCorpus.traces.value
        let text = mutated(seed, corpus: corpus)
        guard let trace = try? Trace.parse(text) else { return nil }  // a typed refusal is the right answer
        let result = TraceReplayer().replay(trace)
        _ = TraceTranscript.render(trace)
        if corpus.contains(text), result.divergence != nil {
            return FuzzFailure(seed: seed, problem: "an unchanged trace did not replay", reproduction: text)
        }
        return nil
    }
}
