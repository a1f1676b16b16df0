/// A value from a set REST API V2 may grow (an action name, a reason, a profile type, …): the values
/// this engine knows are cases, anything else is kept as sent in `other`, so a value Adobe adds
/// tomorrow reads, round-trips and is handled by the documented default of each place that uses it
/// instead of failing the answer that carries it.
///
/// Make values from the wire with `init(rawValue:)`: it returns the known case for a known spelling,
/// so `.other("authenticate")` never stands for `V2Session/ActionName/authenticate`.
public protocol V2OpenValue: RawRepresentable, Hashable, Sendable, CustomStringConvertible where RawValue == String {
    /// Every value this engine knows, in the order the documentation lists them.
    static var known: [Self] { get }
    /// A value this engine does not know, kept as sent.
    static func other(_ rawValue: String) -> Self
}

extension V2OpenValue {
    /// The known value spelled `rawValue`, or ``other(_:)`` keeping it as sent.
    public init(rawValue: String) {
        self = Self.known.first { $0.rawValue == rawValue } ?? .other(rawValue)
    }

    /// The wire spelling.
    public var description: String { rawValue }

    /// Whether this is a value the engine knows (not ``other(_:)``).
    public var isKnown: Bool { Self.known.contains(self) }
}
