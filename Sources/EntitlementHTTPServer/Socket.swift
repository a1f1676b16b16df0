#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The few socket calls the server makes, each returning a typed failure instead of trapping.
enum Socket {
    /// A listening TCP socket on 127.0.0.1 (`port` 0: an ephemeral one), non-blocking for `poll`.
    static func listen(port: UInt16, backlog: Int32 = 1024) throws(HTTPServerError) -> (fd: Int32, port: UInt16) {
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .socket(errno) }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            let code = errno
            close(fd)
            throw .bind(port: port, errno: code)
        }
        guard Glibc_listen(fd, backlog) == 0 else {
            let code = errno
            close(fd)
            throw .socket(code)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        setNonBlocking(fd)
        return (fd, UInt16(bigEndian: address.sin_port))
    }

    /// What an `accept` gave.
    enum Accepted {
        /// A connection, non-blocking, and its peer's address.
        case connection(fd: Int32, peer: String)
        /// No connection is waiting.
        case noneWaiting
        /// The process (or system) has no descriptor left for it: it stays waiting.
        case outOfDescriptors
    }

    /// Accepts one waiting connection.
    static func accept(_ listener: Int32) -> Accepted {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let fd = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc_accept(listener, $0, &length) }
        }
        guard fd >= 0 else {
            switch errno {
            case EMFILE, ENFILE, ENOBUFS, ENOMEM: return .outOfDescriptors
            default: return .noneWaiting  // EAGAIN, or the peer gave up (ECONNABORTED): nothing to serve
            }
        }
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        setNonBlocking(fd)
        let ip = UInt32(bigEndian: address.sin_addr.s_addr)
        let peer = "\(ip >> 24).\((ip >> 16) & 0xFF).\((ip >> 8) & 0xFF).\(ip & 0xFF)"
        return .connection(fd: fd, peer: peer)
    }

    /// Waits `milliseconds`, or less if `wake` becomes readable; whether it did (the server is stopping).
    static func pause(milliseconds: Int32, wake: Int32) -> Bool {
        var descriptor = pollfd(fd: wake, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, max(milliseconds, 0)) > 0
    }

    /// Ends both directions of `fd` without closing it (its owner closes it): a thread waiting on it
    /// wakes to an end of stream.
    static func hangUp(_ fd: Int32) { _ = shutdown(fd, Int32(SHUT_RDWR)) }

    /// Waits until `fd` is readable, `wake` is readable, or `timeoutMilliseconds` pass.
    static func waitReadable(_ fd: Int32, wake: Int32, timeoutMilliseconds: Int32) -> Readiness {
        var fds = [pollfd(fd: fd, events: Int16(POLLIN), revents: 0), pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
        let count = poll(&fds, 2, max(timeoutMilliseconds, 0))
        if count < 0 { return errno == EINTR ? .timedOut : .closed }
        if count == 0 { return .timedOut }
        if fds[1].revents != 0 { return .woken }
        return .readable
    }

    /// What `waitReadable` saw.
    enum Readiness {
        case readable, timedOut, woken, closed
    }

    /// Reads what is there (nil: the peer closed or the socket failed; empty: nothing yet).
    static func receive(_ fd: Int32, into buffer: inout [UInt8]) -> Int? {
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        if count > 0 { return count }
        if count < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { return 0 }
        return nil
    }

    /// Writes all of `bytes`, waiting for the socket while it is full (false: the peer is gone).
    static func sendAll(_ fd: Int32, _ bytes: [UInt8], timeoutMilliseconds: Int32 = 10_000) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, noSignal) }
            if sent > 0 {
                offset += sent
            } else if sent < 0, errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR {
                var entry = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                guard poll(&entry, 1, timeoutMilliseconds) > 0 else { return false }
            } else {
                return false
            }
        }
        return true
    }

    /// Makes the socket's close send a TCP reset instead of a graceful close (`SO_LINGER` 0). It does
    /// not close it: the connection's owner closes it once, so no other socket that reuses the number
    /// is ever closed by mistake.
    static func resetOnClose(_ fd: Int32) {
        var option = linger(l_onoff: 1, l_linger: 0)
        setsockopt(fd, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// A pipe whose read end becomes readable when the server shuts down.
    static func wakePipe() throws(HTTPServerError) -> (read: Int32, write: Int32) {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { throw .socket(errno) }
        return (ends[0], ends[1])
    }

    /// Makes the wake pipe readable (one byte, never read: every poller sees it).
    static func signal(_ writeEnd: Int32) {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    private static func setNonBlocking(_ fd: Int32) {
        let flags = fcntl(fd, F_GETFL, 0)
        _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    }
}

#if canImport(Glibc)
    private let noSignal = Int32(MSG_NOSIGNAL)
    private func Glibc_listen(_ fd: Int32, _ backlog: Int32) -> Int32 { Glibc.listen(fd, backlog) }
    private func Glibc_accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        Glibc.accept(fd, address, length)
    }
#else
    private let noSignal: Int32 = 0
    private func Glibc_listen(_ fd: Int32, _ backlog: Int32) -> Int32 { Darwin.listen(fd, backlog) }
    private func Glibc_accept(_ fd: Int32, _ address: UnsafeMutablePointer<sockaddr>, _ length: UnsafeMutablePointer<socklen_t>) -> Int32 {
        Darwin.accept(fd, address, length)
    }
#endif
