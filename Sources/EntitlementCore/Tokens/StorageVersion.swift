/// The version of one device's and requestor's stored tokens: every successful write makes a new one.
///
/// Versions are what a compare-and-set compares: a save names the version it read and succeeds
/// only if the store still holds it. ``absent`` is the version of "nothing stored yet".
public struct StorageVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The version number; ``absent`` is 0 and every write increments it (wrapping is unreachable).
    public var number: UInt64

    /// Creates a version.
    public init(_ number: UInt64) { self.number = number }

    /// Nothing has ever been stored under this key. A store never goes back to it: saving
    /// ``StoredTokens/empty`` makes a new version like any other save.
    public static let absent = StorageVersion(0)

    /// The version the next successful write makes.
    public var next: StorageVersion { StorageVersion(number == .max ? 1 : number + 1) }

    /// Orders versions by number.
    public static func < (lhs: StorageVersion, rhs: StorageVersion) -> Bool { lhs.number < rhs.number }

    /// `v<number>`.
    public var description: String { "v\(number)" }
}

/// Stored tokens as read, with the version a save must name to replace them.
public struct VersionedTokens: Sendable, Hashable {
    /// The tokens (``StoredTokens/empty`` when none are stored).
    public var tokens: StoredTokens
    /// Their version (``StorageVersion/absent`` when none are stored).
    public var version: StorageVersion

    /// Creates a versioned token set.
    public init(_ tokens: StoredTokens, version: StorageVersion) {
        self.tokens = tokens
        self.version = version
    }

    /// Nothing stored.
    public static let absent = VersionedTokens(.empty, version: .absent)
}
