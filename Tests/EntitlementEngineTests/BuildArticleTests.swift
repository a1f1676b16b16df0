import Foundation
import Testing

/// The article *How the engine is built* names the file of each hop of a call; those files exist, so
/// the picture stays true as the code moves.
@Suite("How the engine is built: every file the picture names exists")
struct BuildArticleTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let modules = ["Engine": "EntitlementEngine", "Core": "EntitlementCore", "V2": "EntitlementV2", "HTTP": "EntitlementHTTP"]

    @Test func everyNamedFileExists() throws {
        let article = try String(
            contentsOf: Self.root.appendingPathComponent("Sources/EntitlementEngine/EntitlementEngine.docc/HowTheEngineIsBuilt.md"),
            encoding: .utf8)
        let picture = try #require(article.components(separatedBy: "```").dropFirst().first)
        var named: [String] = []
        for line in picture.split(separator: "\n") {
            // The file column: `Module: path, path; Module: path → Module: path`.
            guard let column = line.range(of: #"(Engine|Core|V2|HTTP): .*$"#, options: .regularExpression) else { continue }
            var module = ""
            for token in line[column].split(whereSeparator: { " ,;→".contains($0) }) {
                if token.hasSuffix(":"), let folder = Self.modules[String(token.dropLast())] {
                    module = folder
                } else if token.hasSuffix(".swift") {
                    named.append(module + "/" + token)
                }
            }
        }
        #expect(named.count >= 15, "\(named)")
        let sources = Self.root.appendingPathComponent("Sources")
        for path in named {
            let folder = sources.appendingPathComponent((path as NSString).deletingLastPathComponent)
            let pattern = (path as NSString).lastPathComponent
            let files = try Self.files(below: folder)
            // `EntitlementMachine+<Region>.swift`, `V2*.swift` and `+Answers.swift` stand for several files or a suffix.
            let matches = files.filter { file in
                if pattern.contains("<Region>") { return file.hasPrefix("EntitlementMachine+") }
                if pattern.hasPrefix("+") { return file.hasSuffix(pattern) }
                if pattern.contains("*") { return file.hasPrefix(pattern.components(separatedBy: "*")[0]) && file.hasSuffix(".swift") }
                return file == pattern
            }
            #expect(!matches.isEmpty, "the article names \(path), which does not exist")
        }
    }

    /// The names of the files below `folder`, its subfolders included.
    static func files(below folder: URL) throws -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: folder.path) else { return [] }
        return walker.compactMap { ($0 as? String).map { ($0 as NSString).lastPathComponent } }
    }
}
