import EntitlementEngine
import EntitlementFuzzing
import EntitlementSimulator
import EntitlementTestSupport
import EntitlementTracing
import Foundation
import Testing

/// The random explorer's bounded, seeded budget in every `swift test` (the long mode is
/// `entitle explore --seeds N`).
@Suite("Random explorer", .backgroundThread)
struct RandomExplorerTests {
    static let seeds = UInt64(ProcessInfo.processInfo.environment["ENTITLE_EXPLORE_SEEDS"].flatMap(Int.init) ?? 400)

    @Test func randomSequencesKeepEveryInvariant() async {
        let explorer = RandomExplorer()
        for seed in 1...Self.seeds {
            if let failure = await explorer.explore(seed: seed) {
                let shrunk = await explorer.exploreAndShrink(seed: seed) ?? failure
                Issue.record(Comment(rawValue: shrunk.description))
                return
            }
        }
    }

    @Test func aScriptIsAPureFunctionOfItsSeed() {
        let explorer = RandomExplorer(length: 30)
        expectEqual(explorer.steps(seed: 7), explorer.steps(seed: 7))
        #expect(explorer.steps(seed: 7) != explorer.steps(seed: 8))
    }

    /// The explorer would see a broken invariant: a refused call that changed the machine is
    /// not something the engine can be made to do, so the check is shown on a script that leaves
    /// a login half done and must still end every call.
    @Test func theInvariantsAreCheckedNotAssumed() async {
        let explorer = RandomExplorer()
        let steps: [ExplorerStep] = [
            .call(.setRequestor(requestorID: "sim-requestor", serviceProviders: [])),
            .call(.getAuthentication(forceAuthn: false, data: [:])), .call(.setSelectedProvider("acme-cable")),
            .hold(.profileByCode), .logIn(rightPassword: true, deliver: true),
        ]
        #expect(await explorer.run(steps, seed: 2).isEmpty)
    }

    /// What `entitle explore --trace FILE` writes: the engine's trace of a script, which replays: the
    /// script's calls on that engine, then the explorer's closing check (a fresh login).
    @Test func aScriptsTraceIsTheEnginesAndReplays() async throws {
        let explorer = RandomExplorer()
        let steps: [ExplorerStep] = [
            .call(.setRequestor(requestorID: "sim-requestor", serviceProviders: [])),
            .call(.getAuthentication(forceAuthn: false, data: [:])), .call(.setSelectedProvider("acme-cable")),
            .logIn(rightPassword: true, deliver: true), .call(.checkAuthentication),
        ]
        let trace = await explorer.trace(of: steps, seed: 2)
        expectEqual(trace.header["recorded_with"], "entitle explore")
        let calls = trace.records.compactMap { $0["in"] == "call" ? $0["call"]?.string : nil }
        expectEqual(calls.prefix(5), ["setRequestor", "getAuthentication", "setSelectedProvider", "handleExternalURL", "checkAuthentication"])
        expectEqual(calls.dropFirst(5), ["setRequestor", "getAuthentication", "setSelectedProvider", "handleExternalURL"], "the fresh login")
        #expect(TraceReplayer().replay(try Trace.parse(trace.text)).divergence == nil)
    }
}
