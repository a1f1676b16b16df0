import EntitlementEngine
import EntitlementTracing
import Foundation
import EntitlementTestSupport
import Testing

/// Checked-in traces: `*.complete.jsonl` must replay; `*.divergent.jsonl` (hand-edited copies) must
/// fail at the step named here, with a report that says why.
@Suite("Golden traces in Tests/Traces")
struct GoldenTraceTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Traces")

    static func load(_ name: String) throws -> Trace {
        try Trace.parse(try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8))
    }

    static var completes: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".complete.jsonl") }.sorted()
    }

    @Test func thereIsACompleteTraceForEachCookbookFlowSoFar() {
        #expect(Self.completes == [
            "flow-b-startup.complete.jsonl", "flow-c-authentication.complete.jsonl", "flow-d-platform-sso.complete.jsonl",
            "flow-f-authorization.complete.jsonl",
            "flow-g-view-media.complete.jsonl", "flow-h-logout.complete.jsonl",
        ])
    }

    @Test(arguments: completes)
    func completeTracesReplay(name: String) throws {
        let result = TraceReplayer(checkingRows: true).replay(try Self.load(name))
        #expect(result.divergence == nil, "\(result.divergence?.description ?? "")")
        #expect(result.effectsNotInRows.isEmpty, "every effect is named by a row of its step: \(result.effectsNotInRows)")
        #expect(result.machineMatches, "recorded by another transition table: re-record with `entitle record`")
        let text = try String(contentsOf: Self.folder.appendingPathComponent(name), encoding: .utf8)
        #expect(text.firstMatch(of: /[A-Za-z0-9_-]{43}/) == nil, "a state in clear")
        #expect(text.firstMatch(of: /(code|authn|authz|media|session|saml|vsa)\.[A-Za-z0-9_-]{8}/) == nil, "a minted secret in clear")
        try TraceReplayer().replayOrThrow(try Self.load(name))
    }

    @Test(arguments: [
        ("flow-b-startup", 10, [String]()),  // a recorded callback removed: the engine still emits it
        ("flow-c-authentication", 17, ["status"]),  // the expected status edited from 1 to 0
        ("flow-f-authorization", 17, ["resource"]),  // a call's argument edited: an unknown request
        ("flow-g-view-media", 22, ["data"]),  // a garbled decision (for another resource): a failure, not a permit
        ("flow-h-logout", 26, ["answers"]),  // the redirect arrives after the logout's deadline
        ("flow-d-platform-sso", 13, ["out"]),  // the picker answer edited to a cancel: N005 instead of the partner profile
    ])
    func divergentTracesFailAtTheNamedStep(name: String, step: Int, fields: [String]) throws {
        let trace = try Self.load(name + ".divergent.jsonl")
        let result = TraceReplayer().replay(trace)
        let divergence = try #require(result.divergence)
        expectEqual(divergence.step, step, "\(divergence)")
        expectEqual(divergence.differingFields, fields, "\(divergence)")
        #expect(divergence.description.hasPrefix("step \(step): expected "))
        #expect(!divergence.context.isEmpty)
        expectEqual(result.recordsReplayed, step - 1)
        #expect(throws: TraceDivergence.self) { try TraceReplayer().replayOrThrow(trace) }
    }

    @Test func anUnknownRequestNamesTheClosestRecordedOne() throws {
        let divergence = try #require(TraceReplayer().replay(try Self.load("flow-f-authorization.divergent.jsonl")).divergence)
        let closest = try #require(divergence.closestRecordedRequest)
        #expect(closest.contains(#""operation":"authorize""#) && closest.contains(#""resource":"sports-live""#))
    }
}
