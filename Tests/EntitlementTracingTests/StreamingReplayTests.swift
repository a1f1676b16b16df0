import EntitlementEngine
import EntitlementSimulator
import EntitlementTracing
import Foundation
import EntitlementTestSupport
import Testing

/// Replaying a trace file as it is read gives what replaying the parsed trace gives — for every golden
/// trace, complete or divergent — and refuses a broken file with the same line and reason.
@Suite("Streaming replay")
struct StreamingReplayTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Traces")

    static var traces: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    @Test(arguments: traces)
    func aStreamedReplayMatchesTheParsedOne(name: String) throws {
        let path = Self.folder.appendingPathComponent(name).path
        let parsed = TraceReplayer().replay(try Trace.parse(String(contentsOfFile: path, encoding: .utf8)))
        let streamed = try TraceReplayer().replay(contentsOfFile: path)
        expectEqual(streamed.recordsReplayed, parsed.recordsReplayed)
        expectEqual(streamed.machineMatches, parsed.machineMatches)
        expectEqual(streamed.divergence?.step, parsed.divergence?.step)
        expectEqual(streamed.divergence?.expected, parsed.divergence?.expected)
        expectEqual(streamed.divergence?.actual, parsed.divergence?.actual)
        expectEqual(streamed.divergence?.context, parsed.divergence?.context)
        expectEqual(streamed.divergence?.differingFields, parsed.divergence?.differingFields)
        expectEqual(name.contains("divergent"), (streamed.divergence != nil))
    }

    @Test func aBrokenFileIsRefusedWithTheLineAndReasonParsingGives() throws {
        let source = Self.folder.appendingPathComponent("flow-f-authorization.complete.jsonl").path
        let text = try String(contentsOfFile: source, encoding: .utf8)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        lines.removeLast()  // the empty string after the final newline
        let cases: [(String, String)] = [
            ("truncated", text + "{\"seq\":"),
            ("not JSON", lines[0] + "\n" + lines[1] + "\nnot json\n"),
            ("out of sequence", lines[0] + "\n" + lines[2] + "\n"),
            ("empty", ""),
            ("header only", lines[0] + "\n"),
        ]
        for (name, content) in cases {
            let path = ScratchSpace.path("entitle-stream-", ending: ".jsonl")
            defer { try? FileManager.default.removeItem(atPath: path) }
            try content.write(toFile: path, atomically: true, encoding: .utf8)
            let parsed = Result { () throws(TraceError) -> TraceReplayResult in TraceReplayer().replay(try Trace.parse(content)) }
            let streamed = Result { () throws(TraceError) -> TraceReplayResult in try TraceReplayer().replay(contentsOfFile: path) }
            switch (parsed, streamed) {
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(name)")
            case (.success(let a), .success(let b)): #expect(a.recordsReplayed == b.recordsReplayed && b.divergence == nil, "\(name)")
            default: Issue.record("\(name): parsed \(parsed), streamed \(streamed)")
            }
        }
        #expect(throws: TraceError.self) { try TraceReplayer().replay(contentsOfFile: "/nonexistent/trace.jsonl") }
    }
}
