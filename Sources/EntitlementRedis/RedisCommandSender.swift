import EntitlementEngine

/// What the token store sends its commands through: one server's connections (``RedisClient``) or a
/// Redis Cluster's (``RedisClusterClient``), each command routed by the key it touches.
public protocol RedisCommandSender: Sendable {
    /// The configuration: the server's, or the cluster's seed node's (with the credentials every node takes).
    var configuration: RedisConfiguration { get }
    /// Where the sender's measurements go (its subscribers' too).
    var metrics: (any EngineMetricsHandler)? { get }
    /// Sends one command touching `key` (nil: any server) and returns its answer; an error answer is
    /// ``RedisError/server(_:)`` (or ``RedisError/authentication(_:)``).
    func send(_ command: [String], key: String?) async throws(RedisError) -> RESPValue
    /// Sends `commands`, all touching `key`'s slot, back to back on one connection; their answers in
    /// order (error answers stay `.error` values).
    func pipeline(_ commands: [[String]], key: String?) async throws(RedisError) -> [RESPValue]
    /// Closes every connection; later commands fail with ``RedisError/closed``.
    func close()
}

extension RedisCommandSender {
    /// None, for a sender made elsewhere that does not measure.
    public var metrics: (any EngineMetricsHandler)? { nil }
}

extension RedisError {
    /// The error an error answer is: ``authentication(_:)`` when the server asks for credentials.
    static func answer(_ message: String) -> RedisError {
        message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS") ? .authentication(message) : .server(message)
    }
}

/// The client a configuration's server calls for, as the server says (`CLUSTER SLOTS`).
public enum RedisConnector {
    /// A ``RedisClusterClient`` when the server runs in cluster mode (it answers `CLUSTER SLOTS` with its
    /// map), else a ``RedisClient``: point the store at any node of a cluster, or at a standalone server,
    /// with the same code. Fails as the first command would (unreachable, refused credentials).
    ///
    /// `CLUSTER SLOTS` rather than `INFO`: a user with least privilege (`+@all -@dangerous`, or the
    /// store's own list in the DocC article) may not run `INFO`, and a cluster client needs `CLUSTER
    /// SLOTS` anyway; a standalone server answers it "cluster support disabled", and a user refused it
    /// (`NOPERM`) is served as on a standalone server.
    public static func connect(
        _ configuration: RedisConfiguration, metrics: (any EngineMetricsHandler)? = nil
    ) async throws(RedisError) -> any RedisCommandSender {
        var probing = RedisConfiguration(
            host: configuration.host, port: configuration.port, credentials: configuration.credentials,
            clientName: configuration.clientName, connectTimeout: configuration.connectTimeout,
            commandTimeout: configuration.commandTimeout, connections: 1)
        probing.limits = configuration.limits
        let probe = RedisClient(probing)
        defer { probe.close() }
        let answer = try await probe.pipeline([["CLUSTER", "SLOTS"]])[0]
        if case .array = answer { return RedisClusterClient(configuration, metrics: metrics) }
        if case .error(let message) = answer, message.hasPrefix("NOAUTH") || message.hasPrefix("WRONGPASS") {
            throw .answer(message)
        }
        return RedisClient(configuration, metrics: metrics)
    }
}
