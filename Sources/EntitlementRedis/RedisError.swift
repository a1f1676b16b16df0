/// Why a Redis command did not get its answer. Each is typed, none carries a secret (commands are
/// never quoted: they hold tokens).
public enum RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No connection could be made (refused, unreachable, timed out connecting).
    case connect(String)
    /// The server did not answer within the command timeout; the connection was closed (a late
    /// answer would be read as the next command's).
    case timeout
    /// The connection broke while the command was under way.
    case connectionLost(String)
    /// The server sent bytes that are not RESP; the connection was closed.
    case protocolViolation(RESPParseError)
    /// The server refused the command (`-ERR …`, `-NOSCRIPT …`, `-READONLY …`).
    case server(String)
    /// The server refused the client's credentials, or asks for some (`WRONGPASS`, `NOAUTH`): the
    /// server's words, never the password.
    case authentication(String)
    /// The answer was RESP, but not what the command answers.
    case unexpectedReply(String)
    /// The client was closed.
    case closed
    /// The caller's task was cancelled while it waited; a command not yet sent was not sent.
    case cancelled

    /// One line saying what happened.
    public var description: String {
        switch self {
        case .connect(let why): "cannot connect to Redis: \(why)"
        case .timeout: "Redis did not answer in time"
        case .connectionLost(let why): "the connection to Redis broke: \(why)"
        case .protocolViolation(let error): "Redis sent something that is not RESP (\(error))"
        case .server(let message): "Redis refused the command: \(message)"
        case .authentication(let message): "Redis refused to sign the client in: \(message)"
        case .unexpectedReply(let what): "an unexpected answer from Redis: \(what)"
        case .closed: "the Redis client is closed"
        case .cancelled: "the wait for Redis was cancelled"
        }
    }
}
