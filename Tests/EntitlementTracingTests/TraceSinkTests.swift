import EntitlementEngine
import EntitlementSimulator
import EntitlementTracing
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// A streaming recorder writes the same lines a recorder in memory keeps, keeps none itself, and its
/// file sink writes a trace that replays.
@Suite("Trace sinks")
struct TraceSinkTests {
    /// Lines as a sink receives them.
    final class Lines: TraceSink {
        let lines = Mutex<[String]>([])
        func write(line: String) { lines.withLock { $0.append(line) } }
    }

    static func signedInSession(recorder: TraceRecorder) async {
        let session = SimulatedSession(recorder: recorder)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        await session.settle()
        await session.logIn(as: "alice", password: "wonderland")
        expectEqual(session.ledger.take().last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await session.enabler.getAuthorization("news-channel")
        // Answered before the logout starts: two requests in flight at once may reach the simulator in
        // either order, and the two sessions compared must record the same one.
        await session.settle()
        await session.enabler.logout()
        await session.settle()
    }

    @Test func aStreamingRecorderWritesTheLinesAKeepingOneKeeps() async throws {
        let keeping = TraceRecorder(recordedWith: "test")
        await Self.signedInSession(recorder: keeping)
        let lines = Lines()
        let streaming = TraceRecorder(recordedWith: "test", streamingTo: lines)
        await Self.signedInSession(recorder: streaming)
        let written = lines.lines.withLock { $0 }
        expectEqual(written.map { $0 + "\n" }.joined(), keeping.trace.text, "the same canonical lines, header first")
        #expect(streaming.trace.records.isEmpty, "a streaming recorder keeps no records")
        #expect(streaming.recordCount == keeping.trace.records.count && streaming.recordCount > 20)
    }

    @Test func theFileSinkWritesATraceThatReplays() async throws {
        let path = ScratchSpace.path("entitle-sink-", ending: ".jsonl")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sink = try FileTraceSink(path: path)
        let recorder = TraceRecorder(recordedWith: "test", streamingTo: sink)
        await Self.signedInSession(recorder: recorder)
        #expect(sink.close())
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let trace = try Trace.parse(text)
        expectEqual(trace.records.count, recorder.recordCount)
        #expect(TraceReplayer().replay(trace).divergence == nil, "the written trace replays")
        #expect(!text.contains("wonderland"), "no secret reaches the file")
        sink.write(line: "after close")
        try expectEqual(String(contentsOfFile: path, encoding: .utf8), text, "lines after close are dropped")
        #expect(throws: FileTraceSink.OpenError.self) { try FileTraceSink(path: "/nonexistent-dir/x.jsonl") }
    }
}
