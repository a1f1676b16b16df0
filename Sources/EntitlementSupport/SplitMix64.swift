/// SplitMix64 (Steele, Lea and Flood, 2014): a tiny, fast generator whose whole sequence is fixed by
/// its seed. The package's one seeded generator — deterministic randomness for tests, scenarios,
/// replay and fuzzing. Not for secrets (the engine draws those from the system's CSPRNG).
package struct SplitMix64: RandomNumberGenerator, Sendable {
    private var state: UInt64

    /// A generator whose sequence is fixed by `seed`.
    package init(seed: UInt64) { state = seed }

    /// The next 64 bits of the sequence.
    package mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
