import Foundation
import Synchronization

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
    /// Where answers are read into: one buffer for the connection's life, not one per command.
    private var readBuffer = [UInt8](repeating: 0, count: 16 << 10)

    private init(fd: Int32, limits: RESPParser.Limits) {
        self.fd = fd
        self.parser = RESPParser(limits: limits)
    }

    deinit { close(fd) }

    /// Opens a connection and signs in, within `configuration.connectTimeout` (and never past `limit`):
    /// the host is resolved (`getaddrinfo`: names, IPv4 and IPv6) and every address tried in order
    /// until one accepts; then the sign-in, name and database as configured (`HELLO`, `SELECT`), in one round trip.
    static func open(_ configuration: RedisConfiguration, until limit: ContinuousClock.Instant? = nil) throws(RedisError) -> RedisConnection {
        var deadline = ContinuousClock.now.advanced(by: configuration.connectTimeout)
        if let limit, limit < deadline { deadline = limit }
        let addresses = try resolve(configuration.host, port: configuration.port, until: deadline)
        var failure = "'\(configuration.host)' has no address"
        for address in addresses {
            guard ContinuousClock.now < deadline else {
                failure = "no answer in time"
                break
            }
            do throws(RedisError) {
                let connection = try connect(to: address, until: deadline, limits: configuration.limits)
                try connection.signIn(configuration, until: deadline)
                return connection
            } catch where error.code == .connect {
                failure = error.message  // the next address, if any
            }
        }
        throw .connect(failure)
    }

    /// One resolved address, as `connect` takes it.
    struct Address {
        let family: Int32
        let bytes: [UInt8]
    }

    /// The host's addresses for TCP, in the order the resolver gives them, by `deadline`: a name is
    /// resolved on a thread of its own (`getaddrinfo` takes no deadline; a resolver that hangs is left
    /// to finish alone), a numeric address at once.
    static func resolve(_ host: String, port: UInt16, until deadline: ContinuousClock.Instant) throws(RedisError) -> [Address] {
        if isNumeric(host) { return try resolve(host, port: port) }
        let outcome = Mutex<Result<[Address], RedisError>?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let result: Result<[Address], RedisError>
            do throws(RedisError) {
                result = .success(try resolve(host, port: port))
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        thread.name = "entitle-redis-resolver"
        thread.start()
        let left = (deadline - ContinuousClock.now).components
        let milliseconds = min(max(left.seconds * 1000 + left.attoseconds / 1_000_000_000_000_000, 0), 86_400_000)
        guard done.wait(timeout: .now() + .milliseconds(Int(milliseconds))) == .success,
            let result = outcome.withLock({ $0 })
        else { throw .connect("resolving '\(host)' took too long") }
        return try result.get()
    }

    /// Whether `host` is a numeric IPv4 or IPv6 address (nothing to look up).
    static func isNumeric(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    /// The host's addresses for TCP, in the order the resolver gives them (blocking).
    private static func resolve(_ host: String, port: UInt16) throws(RedisError) -> [Address] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        #if canImport(Glibc)
            hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        #else
            hints.ai_socktype = SOCK_STREAM
        #endif
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0 else {
            let why = status == EAI_SYSTEM ? describe(errno) : String(cString: gai_strerror(status))
            throw .connect("cannot resolve '\(host)': \(why)")
        }
        defer { freeaddrinfo(list) }
        var addresses: [Address] = []
        var entry = list
        while let info = entry?.pointee {
            if let address = info.ai_addr, info.ai_family == AF_INET || info.ai_family == AF_INET6 {
                let bytes = Array(UnsafeRawBufferPointer(start: address, count: Int(info.ai_addrlen)))
                addresses.append(Address(family: info.ai_family, bytes: bytes))
            }
            entry = info.ai_next
        }
        return addresses
    }

    /// A TCP connection to `address`, non-blocking, made before `deadline`.
    private static func connect(to address: Address, until deadline: ContinuousClock.Instant, limits: RESPParser.Limits)
        throws(RedisError) -> RedisConnection
    {
        #if canImport(Glibc)
            let fd = socket(address.family, Int32(SOCK_STREAM.rawValue), 0)
        #else
            let fd = socket(address.family, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { throw .connect(Self.describe(errno)) }
        let connection = RedisConnection(fd: fd, limits: limits)
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        #if canImport(Darwin)
            setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, socklen_t(MemoryLayout<Int32>.size))
        #endif
        let started = address.bytes.withUnsafeBytes { raw in
            let socketAddress = raw.baseAddress!.assumingMemoryBound(to: sockaddr.self)
            #if canImport(Glibc)
                return Glibc.connect(fd, socketAddress, socklen_t(raw.count))
            #else
                return Darwin.connect(fd, socketAddress, socklen_t(raw.count))
            #endif
        }
        if started != 0 {
            guard errno == EINPROGRESS else { throw .connect(Self.describe(errno)) }
            guard connection.wait(for: Int16(POLLOUT), until: deadline) else { throw .connect("no answer in time") }
            var failure: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &failure, &length)
            guard failure == 0 else { throw .connect(Self.describe(failure)) }
        }
        return connection
    }

    /// Signs in, names the connection and selects the database, as configured, in one round trip:
    /// `HELLO 2 AUTH user password SETNAME name` (Redis ≥ 6), then `SELECT`. Where the server has no
    /// `HELLO` (Redis 5 and older answer "unknown command"), `AUTH`, `SELECT` and `CLIENT SETNAME`
    /// instead, in a second round trip. A refused sign-in is ``RedisError/authentication(_:)`` (the
    /// server's words, never the password).
    ///
    /// `HELLO 2`, not `HELLO 3`: the connection stays on RESP2, the protocol ``RESPParser`` reads —
    /// RESP3's maps, pushes and doubles would buy this store nothing it uses.
    private func signIn(_ configuration: RedisConfiguration, until deadline: ContinuousClock.Instant) throws(RedisError) {
        var hello = ["HELLO", "2"]
        if let credentials = configuration.credentials { hello += ["AUTH", credentials.username ?? "default", credentials.password] }
        if let name = configuration.clientName { hello += ["SETNAME", name] }
        let select: [[String]] = configuration.database != 0 ? [["SELECT", String(configuration.database)]] : []
        guard hello.count > 2 || !select.isEmpty else { return }
        let answers = try signInRoundTrip([hello] + select, until: deadline)
        if case .error(let message) = answers[0], message.hasPrefix("ERR unknown command") {
            var commands: [[String]] = []
            if let credentials = configuration.credentials { commands.append(credentials.authCommand) }
            commands += select
            if let name = configuration.clientName { commands.append(["CLIENT", "SETNAME", name]) }
            try Self.check(try signInRoundTrip(commands, until: deadline), of: commands)
        } else {
            try Self.check(answers, of: [hello] + select)
        }
    }

    private func signInRoundTrip(_ commands: [[String]], until deadline: ContinuousClock.Instant) throws(RedisError) -> [RESPValue] {
        guard !commands.isEmpty else { return [] }
        do throws(RedisError) {
            return try roundTrip(commands.flatMap(RESPValue.command), answers: commands.count, until: deadline)
        } catch .timeout {
            throw .connect("no answer in time")
        }
    }

    /// The first error answer of a sign-in as a typed error. The password is never part of it: Redis
    /// repeats an unknown command's arguments ("with args beginning with: …"), which are cut off.
    private static func check(_ answers: [RESPValue], of commands: [[String]]) throws(RedisError) {
        for (command, answer) in zip(commands, answers) {
            guard case .error(let full) = answer else { continue }
            let message = full.range(of: ", with args beginning with").map { String(full[..<$0.lowerBound]) } ?? full
            if command[0] == "AUTH" || command[0] == "HELLO" && (message.hasPrefix("WRONGPASS") || message.hasPrefix("NOAUTH")) {
                throw .authentication(message)
            }
            throw .server("\(command[0] == "CLIENT" ? "CLIENT SETNAME" : command[0]): \(message)")
        }
    }

    /// Sends `commands` (already encoded, pipelined) and reads one answer per command, all before
    /// `deadline`. A timeout or a broken stream leaves the connection unusable: drop it.
    func roundTrip(_ commands: [UInt8], answers count: Int, until deadline: ContinuousClock.Instant)
        throws(RedisError) -> [RESPValue]
    {
        try write(commands, until: deadline)
        return try readAnswers(count, until: deadline)
    }

    /// Writes `commands` (encoded) whole, by `deadline`. The socket is written at once (it almost always
    /// has room), and waited for only when it is full.
    func write(_ commands: [UInt8], until deadline: ContinuousClock.Instant) throws(RedisError) {
        var sent = 0
        while sent < commands.count {
            guard ContinuousClock.now < deadline else { throw .timeout }
            let written = commands.withUnsafeBytes { bytes in
                #if canImport(Glibc)
                    send(fd, bytes.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL))
                #else
                    send(fd, bytes.baseAddress! + sent, bytes.count - sent, 0)
                #endif
            }
            if written < 0 {
                if errno == EINTR { continue }
                if errno == EAGAIN || errno == EWOULDBLOCK {
                    guard wait(for: Int16(POLLOUT), until: deadline) else { throw .timeout }
                    continue
                }
                throw .connectionLost(Self.describe(errno))
            }
            sent += written
        }
    }

    /// Reads the next `count` answers, by `deadline`.
    func readAnswers(_ count: Int, until deadline: ContinuousClock.Instant) throws(RedisError) -> [RESPValue] {
        var answers: [RESPValue] = []
        answers.reserveCapacity(count)
        while answers.count < count {
            do throws(RESPParseError) {
                while answers.count < count, let value = try parser.next() { answers.append(value) }
            } catch {
                throw .protocolViolation(error)
            }
            guard answers.count < count else { break }
            guard wait(for: Int16(POLLIN), until: deadline) else { throw .timeout }
            let read = readBuffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if read < 0 {
                if errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR { continue }
                throw .connectionLost(Self.describe(errno))
            }
            guard read > 0 else { throw .connectionLost("the server closed the connection") }
            parser.append(readBuffer[0..<read])
        }
        return answers
    }

    /// Whether the server closed (or reset) this idle connection — a restart, a failover, an idle
    /// timeout: an idle connection has nothing to read, so anything readable is its end. Checked before a
    /// connection is reused, so no command is lost on a connection already gone.
    var endedWhileIdle: Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) != 0  // readable, hung up, in error, or poll itself failing
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
