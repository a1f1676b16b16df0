/// Where the Redis server listens and how the client treats it.
public struct RedisConfiguration: Sendable, Hashable {
    /// The server's IPv4 address (a numeric address: `127.0.0.1`).
    public var host: String
    /// The server's port.
    public var port: UInt16
    /// How long a connection may take to open.
    public var connectTimeout: Duration
    /// How long one command (or one pipelined batch) may take from the moment it is sent — waiting for
    /// its connection (behind others, or while it opens) and the server's answer included.
    public var commandTimeout: Duration
    /// How many connections the client keeps, each on a thread of its own.
    public var connections: Int
    /// The bounds on what one answer may be.
    public var limits: RESPParser.Limits

    /// A configuration; `connections` is clamped to 1…64.
    public init(
        host: String = "127.0.0.1", port: UInt16 = 6379, connectTimeout: Duration = .seconds(2),
        commandTimeout: Duration = .seconds(2), connections: Int = 4, limits: RESPParser.Limits = RESPParser.Limits()
    ) {
        self.host = host
        self.port = port
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.connections = min(max(connections, 1), 64)
        self.limits = limits
    }
}
