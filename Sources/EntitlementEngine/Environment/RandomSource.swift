import EntitlementSupport
import Synchronization

/// A source of random bytes. The engine holds one per purpose (today the redirect `state`) so that
/// drawing for one purpose never shifts the values of another.
public protocol RandomSource: Sendable {
    /// `count` random bytes.
    func bytes(_ count: Int) -> [UInt8]
}

/// The operating system's CSPRNG, for production.
public struct SystemRandomSource: RandomSource {
    /// Creates a source backed by `SystemRandomNumberGenerator`.
    public init() {}

    /// `count` bytes from the system CSPRNG, eight per draw.
    public func bytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        var out: [UInt8] = []
        out.reserveCapacity(max(0, count))
        while out.count < count {
            var word = generator.next()
            for _ in 0..<min(8, count - out.count) {
                out.append(UInt8(truncatingIfNeeded: word))
                word >>= 8
            }
        }
        return out
    }
}

/// A deterministic source (SplitMix64) for tests, scenarios, the demo and replay. Not for production.
public final class SeededRandomSource: RandomSource {
    private let generator: Mutex<SplitMix64>

    /// Creates a source whose sequence is fixed by `seed`.
    public init(seed: UInt64) { generator = Mutex(SplitMix64(seed: seed)) }

    /// The next `count` bytes of the sequence.
    public func bytes(_ count: Int) -> [UInt8] {
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
