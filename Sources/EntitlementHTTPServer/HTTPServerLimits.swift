/// What the server accepts and how long it waits.
package struct HTTPServerLimits: Sendable, Hashable {
    /// The longest request line in bytes (414 beyond it).
    package var requestLineBytes: Int
    /// The largest header section in bytes, request line included (431 beyond it).
    package var headerBytes: Int
    /// The most header fields (431 beyond it).
    package var headerFields: Int
    /// The largest body in bytes (413 beyond it).
    package var bodyBytes: Int
    /// How long a client may take to send a whole request once it started (408 beyond it).
    package var requestTimeout: Duration
    /// How long an idle keep-alive connection stays open.
    package var idleTimeout: Duration
    /// The most connections served at once; one more is answered 503 and closed.
    package var connections: Int
    /// How long a shutdown waits for answers in progress before cancelling them.
    package var shutdownGrace: Duration

    /// Limits; the defaults suit the simulator's pages and REST API V2's small JSON bodies.
    package init(
        requestLineBytes: Int = 8 * 1024, headerBytes: Int = 16 * 1024, headerFields: Int = 100, bodyBytes: Int = 1024 * 1024,
        requestTimeout: Duration = .seconds(10), idleTimeout: Duration = .seconds(30), connections: Int = 512,
        shutdownGrace: Duration = .seconds(2)
    ) {
        self.requestLineBytes = requestLineBytes
        self.headerBytes = headerBytes
        self.headerFields = headerFields
        self.bodyBytes = bodyBytes
        self.requestTimeout = requestTimeout
        self.idleTimeout = idleTimeout
        self.connections = connections
        self.shutdownGrace = shutdownGrace
    }
}
