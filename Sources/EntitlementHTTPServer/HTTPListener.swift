import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A socket bound and listening on 127.0.0.1, not yet served: bind first to learn the URL (an
/// ephemeral port), then hand it to `HTTPServer.init(listener:limits:log:handler:)`. A listener
/// never handed over is closed when it goes away.
package final class HTTPListener: Sendable {
    /// The port bound.
    package let port: UInt16
    private let fd: Mutex<Int32?>

    /// Binds 127.0.0.1:`port` (0: an ephemeral port).
    package init(port: UInt16 = 0) throws(HTTPServerError) {
        let listening = try Socket.listen(port: port)
        self.port = listening.port
        self.fd = Mutex(listening.fd)
    }

    /// `http://127.0.0.1:PORT`.
    package var url: String { "http://127.0.0.1:\(port)" }

    /// The socket, handed to a server (once).
    func take() -> Int32 { fd.withLock { fd in defer { fd = nil }; return fd ?? -1 } }

    deinit {
        if let open = fd.withLock({ $0 }) { close(open) }
    }
}
