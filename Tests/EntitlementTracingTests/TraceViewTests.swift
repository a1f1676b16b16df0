import EntitlementEngine
@testable import EntitlementTracing
import Foundation
import EntitlementTestSupport
import Testing

/// The page of a trace (`entitle trace view`), for every golden trace: self-contained, one row per
/// record, the states of the replay beside them, the divergence marked where the replayer finds it.
@Suite("A trace as a page")
struct TraceViewTests {
    static var traces: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: GoldenTraceTests.folder.path)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    /// The JSON the page's script reads.
    static func steps(in page: String) throws -> [JSONValue] {
        let open = #"<script type="application/json" id="steps">"#
        let start = try #require(page.range(of: open)).upperBound
        let end = try #require(page.range(of: "</script>", range: start..<page.endIndex)).lowerBound
        return try #require(try JSONReader.read(String(page[start..<end])).array)
    }

    @Test(arguments: traces)
    func everyGoldenTraceMakesASelfContainedPage(name: String) throws {
        let trace = try GoldenTraceTests.load(name)
        let page = TraceView.html(trace, markingDivergence: true)
        // Nothing is fetched: no external script, style, font, image or frame.
        for fetching in ["src=", "href=", "url(", "@import", "<link", "<iframe", "<img"] {
            #expect(!page.contains(fetching), "\(name): the page would fetch something (\(fetching))")
        }
        #expect(page.hasPrefix("<!DOCTYPE html>") && page.hasSuffix("</html>\n"))
        let rows = page.matches(of: /<tr data-seq="(\d+)"/).map { Int($0.output.1)! }
        expectEqual(rows, Array(1...trace.records.count), "\(name): one row per record, in order")
        // Beside each record, the machine's state after replaying that many records.
        var expected: [TraceReplayStep] = []
        let result = TraceReplayer().replay(trace) { expected.append($0) }
        let steps = try Self.steps(in: page)
        expectEqual(steps.count, expected.count)
        for (step, machine) in zip(steps, expected) {
            expectEqual(step["seq"]?.int, Int64(machine.seq))
            #expect(step["configuration"]?.string == machine.configuration && step["authentication"]?.string == machine.authentication,
                    "\(name), record \(machine.seq)")
        }
        let marked = page.matches(of: /<tr data-seq="(\d+)" class="[^"]*divergence/).map { Int($0.output.1)! }
        if let divergence = result.divergence {
            #expect(name.contains(".divergent."), "\(name) diverges: \(divergence)")
            expectEqual(marked, [divergence.step], "\(name): the marked record is the one the replayer names")
            expectEqual(steps.count, divergence.step - 1, "nothing is replayed past the divergence")
            #expect(page.contains("Today's code diverges here."))
        } else {
            #expect(name.contains(".complete."))
            #expect(marked.isEmpty && steps.count == trace.records.count)
        }
        // Without --replay no divergence is shown; the states are there all the same.
        #expect(!TraceView.html(trace).contains(" divergence\""))
    }

    /// Each kind of record in its lane: a redirect (the device sent to a page, a URL brought back), a
    /// request to the backend or to a provider of the chain, an answer, a timer, storage.
    @Test func everyRecordHasItsLane() throws {
        let trace = try GoldenTraceTests.load("flow-c-authentication.complete.jsonl")
        let page = TraceView.html(trace)
        let lanes = Dictionary(uniqueKeysWithValues: page.matches(of: /<tr data-seq="(\d+)" class="lane-(\w+)/).map { (Int($0.output.1)!, String($0.output.2)) })
        for (index, record) in trace.records.enumerated() {
            let expected: String =
                switch (record["in"]?.string, record["out"]?.string, record["call"]?.string ?? record["callback"]?.string) {
                case ("call", _, "handleExternalURL"), (_, "callback", "navigateToUrl"): "redirect"
                case ("call", _, _): "call"
                case (_, "callback", _): "callback"
                case (_, "request", _): "request"
                case ("backendAnswered", _, _), ("backendFailed", _, _), ("configurationLoaded", _, _): "answer"
                default: "input"
                }
            expectEqual(lanes[index + 1], expected, "record \(index + 1): \(record.canonicalText)")
        }
        #expect(Set(lanes.values).isSuperset(of: ["redirect", "call", "callback", "request", "answer", "input"]))
        let provider: JSONValue = ["seq": 1, "out": "provider", "op": 7, "provider": "store", "request": "credentials"]
        let timer: JSONValue = ["seq": 2, "in": "timerFired", "timer": "redirect", "t": .int(1_767_225_600_000)]
        let stored: JSONValue = ["seq": 3, "in": "storageChanged", "stored": [:], "t": .int(1_767_225_600_000)]
        #expect(TraceView.Lane(provider) == .request && TraceView.Lane(timer) == .timer && TraceView.Lane(stored) == .storage)
    }

    /// A text in a record cannot close the page's script or open markup of its own.
    @Test func recordsAreEscapedWhereverTheyGo() throws {
        var trace = try GoldenTraceTests.load("flow-c-authentication.complete.jsonl")
        trace.records[0] = [
            "seq": 1, "in": "call", "id": 1, "call": "setRequestor", "t": .int(1_767_225_600_000),
            "requestor": "</script><script>alert(1)</script>", "serviceProviders": [],
        ]
        let page = TraceView.html(trace)
        #expect(!page.contains("<script>alert(1)"))
        expectEqual(page.matches(of: /<script/).count, 3, "the steps, the rows' next states and the page's own script, no more")
        #expect(page.contains("&lt;/script&gt;&lt;script&gt;alert(1)"))
    }
}
