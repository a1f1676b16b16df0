import EntitlementEngine
import EntitlementScenarios
import Foundation
import Testing

/// Runs every scenario in `Tests/Scenarios/` — the same library `entitle run Tests/Scenarios` runs.
@Suite("The scenario library")
struct ScenarioLibraryTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scenarios").path

    static var files: [String] { (try? ScenarioLibrary.files(at: [folder])) ?? [] }

    @Test(arguments: files)
    func scenarioPasses(file: String) async throws {
        let scenario = try ScenarioLibrary.load(file)
        let result = await ScenarioRunner().run(scenario)
        if let failure = result.failure { Issue.record(Comment(rawValue: failure.description)) }
    }

    @Test func theLibraryIsNotEmpty() {
        #expect(Self.files.count > 0)
    }
}
