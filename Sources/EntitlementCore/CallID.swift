/// Identifies one accepted call to `AccessEnabler`; every public call returns its id.
///
/// Each terminal callback names the calls it answers (see `EngineEvent.callbackEmitted(_:answering:)`),
/// which is how the test suite checks that every call is answered exactly once.
public struct CallID: Sendable, Hashable, Comparable, Codable, CustomStringConvertible {
    /// The call's sequence number within one engine, from 1.
    public var rawValue: UInt64

    /// Wraps a sequence number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }

    /// Orders calls by arrival.
    public static func < (lhs: CallID, rhs: CallID) -> Bool { lhs.rawValue < rhs.rawValue }

    /// `#n`.
    public var description: String { "#\(rawValue)" }
}
