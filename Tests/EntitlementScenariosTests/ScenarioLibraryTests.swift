import EntitlementEngine
import EntitlementScenarios
import EntitlementTestSupport
import Foundation
import Testing

/// Runs every scenario in `Tests/Scenarios/` — the same library `entitle run Tests/Scenarios` runs.
@Suite("The scenario library")
struct ScenarioLibraryTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Scenarios").path

    static var files: [String] { (try? ScenarioLibrary.files(at: [folder])) ?? [] }

    @Test(.backgroundThread, arguments: files)
    func scenarioPasses(file: String) async throws {
        let scenario = try ScenarioLibrary.load(file)
        let result = await ScenarioRunner().run(scenario)
        if let failure = result.failure { Issue.record(Comment(rawValue: failure.description)) }
    }

    /// The same library with every backend request and answer going through REST API V2's JSON:
    /// the engine's ``V2Client`` (registration, access token, strict decoding, errors by action) on
    /// the simulator's ``SimulatedV2Service``. The results are the in-process ones.
    @Test(.backgroundThread, arguments: files)
    func scenarioPassesOverV2sJSON(file: String) async throws {
        let scenario = try ScenarioLibrary.load(file)
        let result = await ScenarioRunner(overV2Wire: true).run(scenario)
        if let failure = result.failure { Issue.record(Comment(rawValue: failure.description)) }
    }

    /// The same library with the engine on the HTTP backend (`HTTPV2Transport`) against the
    /// simulator served on an ephemeral loopback port (`entitle run --over-http`): faults happen on
    /// the socket. The results are the in-process ones.
    @Test(arguments: files)
    func scenarioPassesOverHTTP(file: String) async throws {
        let scenario = try ScenarioLibrary.load(file)
        let result = await ScenarioRunner(transport: .http).run(scenario)
        if let failure = result.failure { Issue.record(Comment(rawValue: failure.description)) }
    }

    @Test func theLibraryIsNotEmpty() {
        #expect(Self.files.count > 0)
    }
}
