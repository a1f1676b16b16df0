/// Why a ``SessionHost`` refused a call. A refused call never reached an engine: no callback follows it.
///
/// A struct, not an enum, so the host can learn new reasons without breaking a client's `switch`:
/// compare ``code`` with the ``Code`` members (`error.code == .mailboxFull`), or the whole error with one
/// of the static members (`catch SessionHostError.shuttingDown`).
public struct SessionHostError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of refusal it is; more kinds may come.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String, Sendable, Hashable {
            case mailboxFull, sessionClosing, shuttingDown
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// The session already had as many calls waiting or running as it takes.
        public static let mailboxFull = Code(.mailboxFull)
        /// The session was being closed.
        public static let sessionClosing = Code(.sessionClosing)
        /// The host was shutting down.
        public static let shuttingDown = Code(.shuttingDown)

        /// The code's name (`mailboxFull`).
        public var description: String { kind.rawValue }
    }

    /// What kind of refusal it is.
    public let code: Code
    /// The session the call was for, when the refusal is about it.
    public let session: SessionKey?
    /// The mailbox limit the session had reached (``Code/mailboxFull`` only).
    public let limit: Int?

    private init(_ code: Code, session: SessionKey? = nil, limit: Int? = nil) {
        self.code = code
        self.session = session
        self.limit = limit
    }

    /// The session already has `limit` calls waiting or running (``SessionHostSettings/mailboxLimit``).
    package static func mailboxFull(_ key: SessionKey, limit: Int) -> SessionHostError {
        SessionHostError(.mailboxFull, session: key, limit: limit)
    }
    /// The session is being closed (``SessionHost/close(_:)``); call again once it is.
    package static func sessionClosing(_ key: SessionKey) -> SessionHostError { SessionHostError(.sessionClosing, session: key) }
    /// The host is shutting down (``SessionHost/shutdown(gracePeriod:)``) and takes no more calls.
    package static let shuttingDown = SessionHostError(.shuttingDown)

    /// What happened, in words.
    public var description: String {
        switch code {
        case .mailboxFull: "session \(session.map { "\($0)" } ?? "?") already has \(limit ?? 0) calls waiting"
        case .sessionClosing: "session \(session.map { "\($0)" } ?? "?") is closing"
        case .shuttingDown: "the session host is shutting down"
        default: "the session host refused the call (\(code))"
        }
    }
}
