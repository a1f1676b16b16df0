import EntitlementFuzzing
import EntitlementTestSupport
import Testing

@testable import EntitlementHost

/// The registry's key-to-slot index against a dictionary doing the same: every key found at its slot
/// and no other, through growth and removals that shift runs back.
@Suite("Session index")
struct SessionIndexTests {
    /// Random inserts and removals (slots reused as the registry reuses them), checked after every step.
    @Test(.backgroundThread) func randomInsertsAndRemovalsFindWhatADictionaryFinds() {
        var random = FuzzRandom(seed: 11)
        var index = SessionIndex()
        var entries: [SessionKey?] = []
        var vacant: [Int] = []
        var model: [SessionKey: Int] = [:]
        let universe = (0..<400).map { SessionKey(deviceID: "device-\($0)", requestorID: $0 % 3 == 0 ? "a" : "b") }
        for step in 0..<6_000 {
            let key = random.pick(universe)
            if let slot = model[key], random.chance(1, in: 2) {
                index.remove(slot) { entries[$0] }
                entries[slot] = nil
                vacant.append(slot)
                model[key] = nil
            } else if model[key] == nil {
                let slot = vacant.popLast() ?? entries.count
                if slot == entries.count { entries.append(key) } else { entries[slot] = key }
                index.insert(slot) { entries[$0] }
                model[key] = slot
            }
            expectEqual(index.count, model.count, "step \(step)")
            if step % 50 == 0 || step > 5_900 {
                for key in universe {
                    expectEqual(index.slot(of: key) { entries[$0] }, model[key], "step \(step): \(key)")
                }
            }
        }
    }

    /// An empty index finds nothing and removes nothing.
    @Test func anEmptyIndexFindsNothing() {
        var index = SessionIndex()
        let key = SessionKey(deviceID: "d", requestorID: "r")
        #expect(index.slot(of: key) { [key][$0] } == nil)
        index.remove(0) { [key][$0] }
        expectEqual(index.count, 0)
    }
}
