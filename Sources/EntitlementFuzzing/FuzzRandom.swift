import EntitlementSupport

/// A seeded generator (SplitMix64) for fuzzers and explorers: one seed fixes a whole case, so a
/// failing seed printed by `entitle fuzz` or `entitle explore` reproduces it exactly.
package struct FuzzRandom: RandomNumberGenerator, Sendable {
    private var generator: SplitMix64

    /// Creates a generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) { generator = SplitMix64(seed: seed) }

    /// The next 64 random bits.
    package mutating func next() -> UInt64 { generator.next() }

    /// True with probability `numerator / denominator`.
    package mutating func chance(_ numerator: Int, in denominator: Int) -> Bool {
        Int.random(in: 0..<denominator, using: &self) < numerator
    }

    /// A random element of a non-empty collection.
    package mutating func pick<C: Collection>(_ elements: C) -> C.Element {
        elements[elements.index(elements.startIndex, offsetBy: Int.random(in: 0..<elements.count, using: &self))]
    }
}
