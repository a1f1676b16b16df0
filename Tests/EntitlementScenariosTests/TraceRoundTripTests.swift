import EntitlementEngine
import EntitlementScenarios
import EntitlementSimulator
import Testing

/// Recording and replaying every scenario of the library.
@Suite("Traces: record, replay, byte-identical, no secrets")
struct TraceRoundTripTests {
    static func record(_ file: String) async throws -> (ScenarioResult, Trace) {
        let recorder = TraceRecorder(recordedWith: "entitle record")
        let result = await ScenarioRunner().run(try ScenarioLibrary.load(file), recorder: recorder)
        return (result, recorder.trace)
    }

    @Test(arguments: ScenarioLibraryTests.files)
    func everyScenarioReplaysWithZeroDivergence(file: String) async throws {
        let (result, trace) = try await Self.record(file)
        #expect(result.passed)
        let reread = try Trace.parse(trace.text)
        #expect(reread == trace, "the canonical text reads back to the same trace")
        let replay = TraceReplayer().replay(reread)
        #expect(replay.divergence == nil, "\(replay.divergence?.description ?? "")")
        #expect(replay.recordsReplayed == trace.records.count)
        #expect(replay.machineMatches)
        // No secret in clear: not one the simulator minted, nor any 43-character base64url run
        // (the shape of every state, verifier and challenge the engine draws or derives).
        let text = trace.text
        for secret in result.secretsMinted {
            #expect(!text.contains(secret), "a minted secret reached the trace: \(Redactor.shorten(secret))")
        }
        #expect(text.firstMatch(of: /[A-Za-z0-9_-]{43}/) == nil, "a state, verifier or challenge in clear")
        if let failure = result.failure { #expect(!result.secretsMinted.contains { failure.description.contains($0) }) }
    }

    @Test(arguments: ScenarioLibraryTests.files)
    func recordingTwiceGivesByteIdenticalTraces(file: String) async throws {
        let first = try await Self.record(file).1.text
        let second = try await Self.record(file).1.text
        #expect(first == second)
    }
}
