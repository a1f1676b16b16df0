/// Why a ``SessionHost`` refused a call. A refused call never reached an engine: no callback follows it.
public enum SessionHostError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The session already has `limit` calls waiting or running (``SessionHostSettings/mailboxLimit``).
    case mailboxFull(SessionKey, limit: Int)
    /// The session is being closed (``SessionHost/close(_:)``); call again once it is.
    case sessionClosing(SessionKey)
    /// The host is shutting down (``SessionHost/shutdown(gracePeriod:)``) and takes no more calls.
    case shuttingDown

    /// What happened, in words.
    public var description: String {
        switch self {
        case .mailboxFull(let key, let limit): "session \(key) already has \(limit) calls waiting"
        case .sessionClosing(let key): "session \(key) is closing"
        case .shuttingDown: "the session host is shutting down"
        }
    }
}
