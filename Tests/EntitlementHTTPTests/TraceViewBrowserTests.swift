import EntitlementEngine
import EntitlementSimulator
import EntitlementTracing
import Foundation
import EntitlementTestSupport
import Testing

/// Each golden trace's page (`entitle trace view --replay`) in headless Chromium: stepped through with
/// the keyboard, the states it highlights at every record are the machine's after replaying that many
/// records, the divergence is marked on the record the replayer names, a click and End move the focus,
/// and three screenshots are taken.
@Suite(
    "A trace's page in a real browser",
    .enabled(if: Browser.installed || Browser.required, "needs chromium, chromium-driver and python3-selenium (.ci/run installs them)"))
struct TraceViewBrowserTests {
    static let traces = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Traces")

    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: traces.path)) ?? []).filter { $0.hasSuffix(".jsonl") }.sorted()
    }

    @Test func everyGoldenTracesPageShowsTheReplayedStateAtEveryRecord() async throws {
        let folder = ScratchSpace.path("entitle-trace-pages-")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var traces: [(name: String, trace: Trace, page: String)] = []
        for name in Self.names {
            let trace = try Trace.parse(try String(contentsOf: Self.traces.appendingPathComponent(name), encoding: .utf8))
            let page = folder + "/" + name + ".html"
            try TraceView.html(trace, markingDivergence: true).write(toFile: page, atomically: true, encoding: .utf8)
            traces.append((name, trace, page))
        }
        expectEqual(traces.count, 12, "six complete and six divergent golden traces")
        // One browser for every page (a browser per page would start twelve on a 2-core machine).
        let pages = try #require(try await Browser.answer(["pages", folder] + traces.map(\.page))["pages"]?.array)
        expectEqual(pages.count, traces.count)
        for ((name, trace, _), seen) in zip(traces, pages) { try Self.check(seen, of: trace, name: name) }
    }

    /// What the browser read on one trace's page against the replay.
    static func check(_ seen: JSONValue, of trace: Trace, name: String) throws {
        var replayed: [TraceReplayStep] = []
        let result = TraceReplayer().replay(trace) { replayed.append($0) }
        let steps = try #require(seen["steps"]?.array)
        expectEqual(steps.count, trace.records.count, "\(name): one step per record")
        for (index, step) in steps.enumerated() {
            let seq = index + 1
            expectEqual(step["focus"]?.int, Int64(seq), "\(name): the keyboard moved the focus to record \(seq)")
            let states = step["states"]
            guard index < replayed.count else {
                expectEqual(states?.object?.isEmpty, true, "\(name): nothing is highlighted past the divergence (record \(seq))")
                continue
            }
            let machine = replayed[index]
            let authorizations = machine.authorizations.isEmpty ? ["idle"] : machine.authorizations.map(\.state)
            expectEqual(states?["configuration"]?.array?.compactMap(\.string), [machine.configuration], "\(name), record \(seq)")
            expectEqual(states?["authentication"]?.array?.compactMap(\.string), [machine.authentication], "\(name), record \(seq)")
            expectEqual(Set(states?["authorization"]?.array?.compactMap(\.string) ?? []), Set(authorizations), "\(name), record \(seq)")
        }
        let marked = seen["divergence"]?.array?.compactMap(\.int) ?? []
        expectEqual(marked, (result.divergence.map { [Int64($0.step)] } ?? []), "\(name): the divergence is marked where the replayer finds it")
        expectEqual(seen["clicked"]?["focus"]?.int, Int64(trace.records.count / 2 + 1), "\(name): a click moves the focus")
        expectEqual(seen["end"]?["focus"]?.int, Int64(trace.records.count), "\(name): End moves it to the last record")
        let shots = seen["shots"]?.array?.compactMap(\.string) ?? []
        expectEqual(shots.count, 3, "\(name): three screenshots")
        for shot in shots {
            let bytes = FileManager.default.contents(atPath: shot) ?? Data()
            #expect(bytes.count > 10_000 && bytes.starts(with: [0x89, 0x50, 0x4E, 0x47]), "\(shot) is a PNG of the page")
        }
    }
}
