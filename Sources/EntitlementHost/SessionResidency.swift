/// Where a ``SessionHost`` keeps a session.
public enum SessionResidency: Sendable, Hashable {
    /// In memory as an engine.
    case resident
    /// Resting as a value; it comes back as an engine on its next call.
    case resting
}
