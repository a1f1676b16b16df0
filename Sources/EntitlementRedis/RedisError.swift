/// Why a Redis command did not get its answer. Each is typed, none carries a secret (commands are
/// never quoted: they hold tokens).
///
/// A struct with an opaque ``Code`` (as valkey-swift's errors are): a new kind of failure does not break
/// a caller's `switch`. Make one with the static members (`.timeout`, `.server("…")`, …) and read it by
/// ``code``, ``message`` and, for a protocol violation, `parseError`.
public struct RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private let name: String
        private init(_ name: String) { self.name = name }

        /// No connection could be made (refused, unreachable, timed out connecting).
        public static let connect = Code("connect")
        /// The server did not answer within the command timeout; the connection was closed (a late
        /// answer would be read as the next command's).
        public static let timeout = Code("timeout")
        /// The connection broke while the command was under way.
        public static let connectionLost = Code("connectionLost")
        /// The server sent bytes that are not RESP; the connection was closed.
        public static let protocolViolation = Code("protocolViolation")
        /// The server refused the command (`-ERR …`, `-NOSCRIPT …`, `-READONLY …`).
        public static let server = Code("server")
        /// The server refused the client's credentials, or asks for some (`WRONGPASS`, `NOAUTH`).
        public static let authentication = Code("authentication")
        /// The answer was RESP, but not what the command answers.
        public static let unexpectedReply = Code("unexpectedReply")
        /// The client was closed.
        public static let closed = Code("closed")
        /// The caller's task was cancelled while it waited; a command not yet sent was not sent.
        public static let cancelled = Code("cancelled")

        /// The code's name (`timeout`, `server`, …).
        public var description: String { name }
    }

    /// What kind of failure it is.
    public var code: Code
    /// The system's or the server's words (never a command, never a password); empty when there are none.
    public var message: String
    /// What was wrong with the bytes, for ``Code/protocolViolation``.
    package var parseError: RESPParseError?

    private init(_ code: Code, _ message: String = "", parseError: RESPParseError? = nil) {
        self.code = code
        self.message = message
        self.parseError = parseError
    }

    /// No connection could be made.
    public static func connect(_ why: String) -> RedisError { RedisError(.connect, why) }
    /// The server did not answer within the command timeout.
    public static let timeout = RedisError(.timeout)
    /// The connection broke while the command was under way.
    public static func connectionLost(_ why: String) -> RedisError { RedisError(.connectionLost, why) }
    /// The server sent bytes that are not RESP.
    package static func protocolViolation(_ error: RESPParseError) -> RedisError { RedisError(.protocolViolation, parseError: error) }
    /// The server refused the command, in its words.
    public static func server(_ message: String) -> RedisError { RedisError(.server, message) }
    /// The server refused the client's credentials, in its words (never the password).
    public static func authentication(_ message: String) -> RedisError { RedisError(.authentication, message) }
    /// The answer was not what the command answers.
    public static func unexpectedReply(_ what: String) -> RedisError { RedisError(.unexpectedReply, what) }
    /// The client was closed.
    public static let closed = RedisError(.closed)
    /// The caller's task was cancelled while it waited.
    public static let cancelled = RedisError(.cancelled)

    /// One line saying what happened.
    public var description: String {
        switch code {
        case .connect: "cannot connect to Redis: \(message)"
        case .timeout: "Redis did not answer in time"
        case .connectionLost: "the connection to Redis broke: \(message)"
        case .protocolViolation: "Redis sent something that is not RESP (\(parseError.map { "\($0)" } ?? message))"
        case .server: "Redis refused the command: \(message)"
        case .authentication: "Redis refused to sign the client in: \(message)"
        case .unexpectedReply: "an unexpected answer from Redis: \(message)"
        case .closed: "the Redis client is closed"
        case .cancelled: "the wait for Redis was cancelled"
        default: message.isEmpty ? "Redis: \(code)" : "Redis: \(code): \(message)"
        }
    }
}
