/// Where the Redis server listens and how the client treats it.
public struct RedisConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The server's host: a name (`redis.internal`, `localhost`: resolved with `getaddrinfo`, every
    /// address tried in order), a numeric IPv4 address (`127.0.0.1`) or an IPv6 one (`::1`).
    public var host: String
    /// The server's port.
    public var port: UInt16
    /// Who the client signs in as (`AUTH`), if the server asks; nil for a server without a password.
    public var credentials: RedisCredentials?
    /// The database every connection selects (`SELECT`; 0, the default, selects nothing).
    public var database: Int
    /// The name every connection gives itself (`CLIENT SETNAME`), as `CLIENT LIST` shows it; nil for none.
    public var clientName: String?
    /// How long a connection may take to open (every address of the host tried within it), signing in
    /// included.
    public var connectTimeout: Duration
    /// How long one command (or one pipelined batch) may take from the moment it is sent — waiting for
    /// its connection (behind others, or while it opens) and the server's answer included.
    public var commandTimeout: Duration
    /// How many connections the client keeps, each on a thread of its own.
    public var connections: Int
    /// The bounds on what one answer may be.
    package var limits: RESPParser.Limits

    /// A configuration; `connections` is clamped to 1…64, `database` to 0….
    public init(
        host: String = "127.0.0.1", port: UInt16 = 6379, credentials: RedisCredentials? = nil, database: Int = 0,
        clientName: String? = nil, connectTimeout: Duration = .seconds(2), commandTimeout: Duration = .seconds(2),
        connections: Int = 4
    ) {
        self.host = host
        self.port = port
        self.credentials = credentials
        self.database = max(database, 0)
        self.clientName = clientName
        self.connectTimeout = connectTimeout
        self.commandTimeout = commandTimeout
        self.connections = min(max(connections, 1), 64)
        self.limits = RESPParser.Limits()
    }

    /// A configuration from a `redis://[[user]:password@]host[:port][/database]` URL (user and password
    /// percent-encoded; an IPv6 host in brackets; port 6379 and database 0 unless given). `rediss://`
    /// (TLS) is refused with the way to reach such a server: through a local TLS tunnel, by
    /// `redis://` to the tunnel (DocC *Tokens and storage*).
    public init(url: String, connectTimeout: Duration = .seconds(2), commandTimeout: Duration = .seconds(2), connections: Int = 4)
        throws(RedisURLError)
    {
        let parsed = try RedisURL.parse(url)
        self.init(
            host: parsed.host, port: parsed.port, credentials: parsed.credentials, database: parsed.database,
            connectTimeout: connectTimeout, commandTimeout: commandTimeout, connections: connections)
    }

    /// Where the client connects and as whom, never with the password.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        var text = "redis://"
        if let credentials { text += (credentials.username.map { RedisURL.encode($0) } ?? "") + ":•••@" }
        text += "\(shownHost):\(port)"
        if database != 0 { text += "/\(database)" }
        return text
    }
}

/// Who a client signs in as: a password alone (`requirepass`, the `default` user) or an ACL user and
/// its password. Its description and its mirror never show the password.
public struct RedisCredentials: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    /// The ACL user; nil signs in as `default` with the password alone (`AUTH password`).
    public var username: String?
    /// The password (a secret: never in a log line, an error or a description).
    public var password: String

    /// Credentials for `username` (nil: the default user) with `password`.
    public init(username: String? = nil, password: String) {
        self.username = username
        self.password = password
    }

    /// The `AUTH` command that signs in with these credentials.
    var authCommand: [String] { username.map { ["AUTH", $0, password] } ?? ["AUTH", password] }

    /// `user NAME, password •••` (or `password •••` for the default user).
    public var description: String { (username.map { "user \($0), " } ?? "") + "password •••" }

    /// The user alone: debuggers and `dump` show no password either.
    public var customMirror: Mirror { Mirror(self, children: ["username": username as Any, "password": "•••"]) }
}
