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
