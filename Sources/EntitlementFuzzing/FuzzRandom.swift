import EntitlementSupport

/// The fuzzers' and explorers' seeded generator (the package's `SplitMix64`, with its `chance` and
/// `pick`): one seed fixes a whole case, so a failing seed printed by `entitle fuzz` or
/// `entitle explore` reproduces it exactly.
package typealias FuzzRandom = SplitMix64
