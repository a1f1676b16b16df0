import EntitlementEngine
import EntitlementSupport
import Synchronization

/// A deterministic source (SplitMix64) for tests, scenarios, the demo and replay. Not for production.
package final class SeededRandomSource: RandomSource {
    private let generator: Mutex<SplitMix64>

    /// Creates a source whose sequence is fixed by `seed`.
    package init(seed: UInt64) { generator = Mutex(SplitMix64(seed: seed)) }

    /// The next `count` bytes of the sequence.
    package func bytes(_ count: Int) -> [UInt8] {
        generator.withLock { generator in
            var out: [UInt8] = []
            out.reserveCapacity(count)
            while out.count < count {
                let z = generator.next()
                for shift in stride(from: 0, to: 64, by: 8) where out.count < count {
                    out.append(UInt8(truncatingIfNeeded: z >> UInt64(shift)))
                }
            }
            return out
        }
    }
}
