import EntitlementEngine
import Foundation
import EntitlementTestSupport
import Testing

/// One version number: the one `EngineVersion` holds is the one the article *Changes* starts
/// with, the one traces record, and the one the *Traces* article shows.
@Suite("One version number")
struct VersionTests {
    static let catalog = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/EntitlementEngine/EntitlementEngine.docc")

    @Test func theChangesArticleStartsWithTheCurrentVersion() throws {
        let changes = try String(contentsOf: Self.catalog.appendingPathComponent("Changes.md"), encoding: .utf8)
        let first = try #require(changes.split(separator: "\n").first { $0.hasPrefix("## ") })
        #expect(first.hasPrefix("## \(EngineVersion.current) — "), "Changes.md starts with \(first)")
        let versions = changes.split(separator: "\n").filter { $0.hasPrefix("## ") }.map { $0.dropFirst(3).prefix { $0 != " " } }
        expectEqual(Set(versions).count, versions.count, "each version once")
    }

    @Test func tracesAndTheTracesArticleCarryIt() throws {
        // The golden traces are fresh recordings (GoldenTraceTests, TraceRoundTripTests).
        let traces = Self.catalog.deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Tests/Traces")
        for file in try FileManager.default.contentsOfDirectory(atPath: traces.path) where file.hasSuffix(".jsonl") {
            let text = try String(contentsOf: traces.appendingPathComponent(file), encoding: .utf8)
            let header = try #require(text.split(separator: "\n").first)
            #expect(header.contains("\"engine\":\"\(EngineVersion.current)\""), "\(file)")
        }
        let article = try String(
            contentsOf: Self.catalog.deletingLastPathComponent().deletingLastPathComponent()
                .appendingPathComponent("EntitlementTracing/EntitlementTracing.docc/Traces.md"), encoding: .utf8)
        #expect(article.contains("\"engine\":\"\(EngineVersion.current)\""), "the Traces article's example header")
        #expect(article.contains("\"recorded_with\":\"entitle record \(EngineVersion.current)\""))
    }
}
