import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Debian's `stunnel4` in server mode on a loopback port: it accepts TLS with a certificate and key
/// from `certificates` (`server.crt`, `server.key`) and carries each connection, in clear, to a
/// loopback `target` port — a real HTTPS front for a plain server, as a TLS-terminating proxy puts one
/// before a service. ``restart()`` kills it (every connection through it torn down at once) and starts
/// it again on the same port. `.ci/run` makes the certificates, for `localhost` and 127.0.0.1, signed by
/// an authority it adds to the system's trust store (the HTTP transports trust no other), and names
/// their folder in `ENTITLE_TLS_DIR`.
package final class TLSTerminator: Sendable {
    /// The program.
    package static let stunnel = "/usr/bin/stunnel4"
    /// The folder `.ci/run` names in `ENTITLE_TLS_DIR`, when it holds a certificate and key, and stunnel is installed.
    package static func certificatesFromEnvironment() -> String? {
        guard let folder = getenv("ENTITLE_TLS_DIR").map({ String(cString: $0) }), !folder.isEmpty,
            access("\(folder)/server.crt", R_OK) == 0, access("\(folder)/server.key", R_OK) == 0, access(stunnel, X_OK) == 0
        else { return nil }
        return folder
    }

    /// Where it accepts TLS.
    package let port: UInt16
    /// Where it carries connections.
    package let target: UInt16
    private let configuration: String
    private let process: Mutex<ChildProcess?>

    /// Starts stunnel on `port` in front of `target`, with its configuration (and log) in `folder`;
    /// returns once it accepts connections (at most about 10 s).
    package init(certificates: String, target: UInt16, port: UInt16, folder: String) throws(ChildProcessError) {
        self.port = port
        self.target = target
        configuration = "\(folder)/stunnel-\(port).conf"
        let text = """
            foreground = yes
            pid =
            debug = warning
            output = \(folder)/stunnel-\(port).log
            [https]
            accept = 127.0.0.1:\(port)
            connect = 127.0.0.1:\(target)
            cert = \(certificates)/server.crt
            key = \(certificates)/server.key

            """
        guard let file = fopen(configuration, "w") else { throw ChildProcessError(program: Self.stunnel, code: errno) }
        fputs(text, file)
        fclose(file)
        process = Mutex(nil)
        try start()
    }

    deinit { process.withLock { $0?.send(SIGKILL) } }

    /// Kills stunnel — every connection through it is torn down — and starts it again on the same port.
    package func restart() throws(ChildProcessError) {
        stop()
        try start()
    }

    /// Kills stunnel and reaps it.
    package func stop() {
        guard let running = process.withLock({ value -> ChildProcess? in defer { value = nil }; return value }) else { return }
        running.send(SIGKILL)
        _ = running.waitForExit()
    }

    private func start() throws(ChildProcessError) {
        let child = try ChildProcess.spawn(Self.stunnel, [configuration])
        process.withLock { $0 = child }
        for _ in 0..<200 where child.isRunning {
            if Self.accepts(port) { return }
            usleep(50_000)
        }
        throw ChildProcessError(program: Self.stunnel, code: ECONNREFUSED)
    }

    /// Whether something accepts TCP connections on loopback `port` now.
    private static func accepts(_ port: UInt16) -> Bool {
        #if canImport(Glibc)
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
