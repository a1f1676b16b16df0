import EntitlementEngine
import EntitlementTracing
import Foundation
import Testing

/// A damaged trace is refused or diverges; it never traps the reader, the replayer or a transcript.
@Suite("Damaged traces")
struct DamagedTraceTests {
    /// Trace records with negative ids, flows or operations trapped the reader and the replayer.
    @Test(arguments: ["id", "flow", "op"])
    func aNegativeIdentifierInATraceIsRefused(field: String) throws {
        let trace = try String(contentsOf: GoldenTraceTests.folder.appendingPathComponent("flow-c-authentication.complete.jsonl"), encoding: .utf8)
        let damaged = trace.replacing(try Regex("\"\(field)\":([0-9]+)"), maxReplacements: 1) { match in
            "\"\(field)\":-" + String(trace[match.range].split(separator: ":").last ?? "1")
        }
        #expect(damaged != trace, "the trace has a \(field) to damage")
        do {
            let result = TraceReplayer().replay(try Trace.parse(damaged))
            // A request's `op` is matched by content on replay, so only ids and flows must diverge.
            #expect(field == "op" || result.divergence != nil, "a damaged trace cannot replay cleanly")
        } catch {
            #expect("\(error)".contains(field), "\(error)")
        }
    }

    /// A `t` near the end of time trapped replay and `trace show`.
    @Test func aTimeNearTheEndOfTimeDoesNotTrap() throws {
        let trace = try String(contentsOf: GoldenTraceTests.folder.appendingPathComponent("flow-c-authentication.complete.jsonl"), encoding: .utf8)
        let damaged = trace.replacingOccurrences(of: "\"t\":1767225600000", with: "\"t\":9223372036854775000")
        let parsed = try Trace.parse(damaged)
        _ = TraceReplayer().replay(parsed)
        #expect(!TraceTranscript.render(parsed).isEmpty)
    }

}
