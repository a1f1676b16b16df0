import EntitlementFuzzing
import EntitlementTestSupport
import Testing

@Suite("Fuzzing support")
struct FuzzRandomTests {
    @Test func aSeedFixesTheSequence() {
        var first = FuzzRandom(seed: 42)
        var second = FuzzRandom(seed: 42)
        var other = FuzzRandom(seed: 43)
        let a = (0..<8).map { _ in first.next() }
        expectEqual(a, (0..<8).map { _ in second.next() })
        #expect(a != (0..<8).map { _ in other.next() })
    }

    @Test func runStopsAtTheFirstRejectedCase() async {
        let target = FuzzTarget(name: "odd", summary: "rejects seed 5", input: { String($0) }) { seed in
            seed == 5 ? FuzzFailure(seed: seed, problem: "five", reproduction: "5") : nil
        }
        #expect(await FuzzTargets.run(target, count: 4) == nil)
        await expectEqual(FuzzTargets.run(target, count: 10)?.seed, 5)
    }
}
