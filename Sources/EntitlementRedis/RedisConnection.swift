#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One TCP connection to Redis, used by one thread at a time (its lane's). Blocking calls with a
/// deadline each, on a non-blocking socket driven by `poll`.
final class RedisConnection {
    private let fd: Int32
    private var parser: RESPParser

    private init(fd: Int32, limits: RESPParser.Limits) {
        self.fd = fd
        self.parser = RESPParser(limits: limits)
    }

    deinit { close(fd) }

    /// Opens a connection, waiting at most `configuration.connectTimeout` (and never past `limit`).
    static func open(_ configuration: RedisConfiguration, until limit: ContinuousClock.Instant? = nil) throws(RedisError) -> RedisConnection {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = configuration.port.bigEndian
        guard inet_pton(AF_INET, configuration.host, &address.sin_addr) == 1 else {
            throw .connect("'\(configuration.host)' is not an IPv4 address")
        }
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .connect(Self.describe(errno)) }
        let connection = RedisConnection(fd: fd, limits: configuration.limits)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let started = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        if started != 0 {
            guard errno == EINPROGRESS else { throw .connect(Self.describe(errno)) }
            var deadline = ContinuousClock.now.advanced(by: configuration.connectTimeout)
            if let limit, limit < deadline { deadline = limit }
            guard connection.wait(for: Int16(POLLOUT), until: deadline) else { throw .connect("no answer in time") }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length)
            guard failure == 0 else { throw .connect(Self.describe(failure)) }
        }
        return connection
    }

    /// Sends `commands` (already encoded, pipelined) and reads one answer per command, all before
    /// `deadline`. A timeout or a broken stream leaves the connection unusable: drop it.
    func roundTrip(_ commands: [UInt8], answers count: Int, until deadline: ContinuousClock.Instant)
        throws(RedisError) -> [RESPValue]
    {
        var sent = 0
        while sent < commands.count {
            guard wait(for: Int16(POLLOUT), until: deadline) else { throw .timeout }
            let written = commands.withUnsafeBytes { bytes in
                #if canImport(Glibc)
                    send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                #else
                    send(fd, bytes.baseAddress! + sent, bytes.count - sent, 0)
                #endif
            }
            if written < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw .connectionLost(Self.describe(errno))
            }
            sent += written
        }
        var answers: [RESPValue] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while answers.count < count {
            do throws(RESPParseError) {
                while answers.count < count, let value = try parser.next() { answers.append(value) }
            } catch {
                throw .protocolViolation(error)
            }
            guard answers.count < count else { break }
            guard wait(for: Int16(POLLIN), until: deadline) else { throw .timeout }
            let read = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if read < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw .connectionLost(Self.describe(errno))
            }
            guard read > 0 else { throw .connectionLost("the server closed the connection") }
            parser.append(chunk[0..<read])
        }
        return answers
    }

    /// Waits until the socket is ready for `events` or `deadline` passes; false on timeout.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant) -> Bool {
        while true {
            let left = deadline - ContinuousClock.now
            guard left > .zero else { return false }
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            var descriptor = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&descriptor, 1, milliseconds)
            if ready > 0 { return true }
            if ready < 0, errno != EINTR { return true }  // the next call reports the socket's error
        }
    }

    /// A system error in words.
    static func describe(_ code: Int32) -> String {
        switch code {
        case ECONNREFUSED: "connection refused"
        case ECONNRESET: "connection reset"
        case EPIPE: "broken pipe"
        case ETIMEDOUT: "timed out"
        case EHOSTUNREACH, ENETUNREACH: "unreachable"
        default: String(cString: strerror(code))
        }
    }
}
