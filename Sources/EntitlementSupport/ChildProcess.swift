import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawnp` and reaped with `waitpid`: signals go to a pid that is
/// known to be this child until it is reaped, every wait for it ends (``waitForExit(upTo:)``), and it
/// inherits no descriptor of the parent's beyond its three standard streams.
///
/// Foundation's `Process` is not used: on Linux its `run()` reads `/proc/self/fd` by copying whole
/// `dirent` records, which reads past glibc's buffer and crashes a process that has about 1,300
/// descriptors open (swift-corelibs-foundation #5472) — as a parallel test run does.
package final class ChildProcess: Sendable {
    /// Where one of the child's standard streams goes.
    package enum Stream: Sendable {
        /// `/dev/null`.
        case null
        /// A file, created if missing (mode 0600); written streams append to it.
        case file(String)
        /// A descriptor of the parent's (a pipe's end, say): the child gets a copy; the parent keeps its own.
        case descriptor(Int32)
    }

    /// How the child ended.
    package enum Termination: Sendable, Equatable, CustomStringConvertible {
        /// It exited with this status.
        case exited(Int32)
        /// A signal ended it.
        case signalled(Int32)

        /// The exit status, or 128 plus the signal's number as a shell reports it.
        package var status: Int32 {
            switch self {
            case .exited(let status): status
            case .signalled(let signal): 128 + signal
            }
        }

        /// "exit N" or "signal N".
        package var description: String {
            switch self {
            case .exited(let status): "exit \(status)"
            case .signalled(let signal): "signal \(signal)"
            }
        }
    }

    /// The child's process id.
    package let pid: pid_t
    /// How the child ended, once reaped (then its pid may belong to another process: no more signals).
    private let ended = Mutex<Termination?>(nil)

    /// Whether the child was started leading a process group of its own (its id is the child's pid).
    private let leadsGroup: Bool

    private init(pid: pid_t, leadsGroup: Bool) {
        self.pid = pid
        self.leadsGroup = leadsGroup
    }

    /// Starts `program` (looked up in `PATH` unless it holds a `/`) with `arguments`, in `directory`
    /// (the parent's when nil), its streams as given. With `ownGroup` the child leads a process group
    /// of its own, which ``sendToGroup(_:)`` signals whole (the child and whatever it started).
    package static func spawn(
        _ program: String, _ arguments: [String], input: Stream = .null, output: Stream = .null, errors: Stream = .null,
        directory: String? = nil, ownGroup: Bool = false
    ) throws(ChildProcessError) -> ChildProcess {
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for (target, stream) in [(Int32(0), input), (1, output), (2, errors)] {
            let flags = target == 0 ? O_RDONLY : O_WRONLY | O_CREAT | O_APPEND
            switch stream {
            case .null: posix_spawn_file_actions_addopen(&actions, target, "/dev/null", flags, 0)
            case .file(let path): posix_spawn_file_actions_addopen(&actions, target, path, flags, 0o600)
            case .descriptor(let descriptor): posix_spawn_file_actions_adddup2(&actions, descriptor, target)
            }
        }
        #if canImport(Glibc)
            if let closeFrom = Self.closeFrom { _ = closeFrom(&actions, 3) }
        #endif
        // A directory is entered by the shell, which then becomes the program: portable, where
        // `posix_spawn_file_actions_addchdir_np` is not.
        let command = directory.map { ["/bin/sh", "-c", #"cd "$0" && exec "$@""#, $0, program] } ?? [program]
        let argv = (command + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var attributes = Self.attributes(ownGroup: ownGroup)
        defer { posix_spawnattr_destroy(&attributes) }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, command[0], &actions, &attributes, argv + [nil], environ)
        guard result == 0 else { throw ChildProcessError(program: program, code: result) }
        return ChildProcess(pid: pid, leadsGroup: ownGroup)
    }

    /// Runs `program` to its end and returns how it ended with all it wrote (both streams drained at
    /// once, so neither pipe can fill and stall it). Blocks the calling thread: not for Swift
    /// concurrency's threads.
    @available(*, noasync, message: "await the async run(_:_:directory:) instead")
    package static func run(_ program: String, _ arguments: [String], directory: String? = nil) throws(ChildProcessError) -> (
        termination: Termination, output: [UInt8], errors: [UInt8]
    ) {
        let output = try Pipe(program: program)
        let errors = try Pipe(program: program)
        let child: ChildProcess
        do {
            child = try spawn(program, arguments, output: .descriptor(output.write), errors: .descriptor(errors.write), directory: directory)
        } catch {
            output.closeBoth()
            errors.closeBoth()
            throw error
        }
        close(output.write)
        close(errors.write)
        let (text, errorText) = readAll(output.read, errors.read)
        close(output.read)
        close(errors.read)
        return (child.waitForExit(), text, errorText)
    }

    /// ``run(_:_:directory:)`` on a thread of its own: for Swift concurrency's callers, whose threads
    /// must never block (``OwnThread``).
    package static func run(_ program: String, _ arguments: [String], directory: String? = nil) async throws(ChildProcessError) -> (
        termination: Termination, output: [UInt8], errors: [UInt8]
    ) {
        let result = await OwnThread.run { () -> Result<(termination: Termination, output: [UInt8], errors: [UInt8]), ChildProcessError> in
            do throws(ChildProcessError) {
                return .success(try run(program, arguments, directory: directory))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }

    /// Sends `signal`, unless the child was already reaped.
    package func send(_ signal: Int32) {
        ended.withLock { ended in
            if ended == nil { _ = kill(pid, signal) }
        }
    }

    /// Sends `signal` to the child's process group — the child and every process it started that stayed
    /// in the group — unless the child was already reaped (its group may then be gone or another's).
    /// The child alone when it was not started with `ownGroup`.
    package func sendToGroup(_ signal: Int32) {
        ended.withLock { ended in
            if ended == nil { _ = kill(leadsGroup ? -pid : pid, signal) }
        }
    }

    /// Whether the child still runs (not reaped; a zombie counts as ended and is reaped here).
    package var isRunning: Bool { reapIfExited() == nil }

    /// How the child ended, once it has: nil while it runs.
    package var termination: Termination? { reapIfExited() }

    /// Waits until the child ends and returns how. Blocks the calling thread: not for Swift
    /// concurrency's threads.
    @available(*, noasync, message: "await the async waitForExit() instead")
    package func waitForExit() -> Termination {
        while true {
            if let termination = reapIfExited() { return termination }
            #if canImport(Glibc)
                // Waits without reaping, so the reaping (and the pid's end) stays under the lock `send` takes.
                var info = siginfo_t()
                let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT)
                if result == -1 && errno != EINTR { return reapIfExited() ?? .exited(-1) }
            #else
                usleep(5_000)
            #endif
        }
    }

    /// ``waitForExit()`` on a thread of its own: for Swift concurrency's callers.
    package func waitForExit() async -> Termination {
        await OwnThread.run { self.waitForExit() }
    }

    /// Whether the child exited within `limit` (it is reaped then); checks every 20 ms.
    package func waitForExit(upTo limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while true {
            if reapIfExited() != nil { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Kills the child (continuing it first, should it be stopped) and waits until it is reaped.
    package func killAndReap() async {
        send(SIGCONT)
        send(SIGKILL)
        _ = await waitForExit(upTo: .seconds(10))
    }

    /// Reaps the child if it has exited; how it ended, or nil while it runs.
    private func reapIfExited() -> Termination? {
        ended.withLock { ended -> Termination? in
            if let ended { return ended }
            var status: Int32 = 0
            let result = waitpid(pid, &status, WNOHANG)
            if result == pid {
                let signal = status & 0x7f
                ended = signal == 0 ? .exited((status >> 8) & 0xff) : .signalled(signal)
            } else if result == -1 && errno != EINTR {
                ended = .exited(-1)  // not our child any more: reaped elsewhere
            }
            return ended
        }
    }

    /// Spawn attributes: the child starts with every signal at its default disposition and none blocked
    /// (a test runner's or a server's ignored `SIGPIPE` is not the child's business), in a process group
    /// of its own when `ownGroup`.
    private static func attributes(ownGroup: Bool) -> posix_spawnattr_t {
        #if canImport(Glibc)
            var attributes = posix_spawnattr_t()
        #else
            var attributes: posix_spawnattr_t?
        #endif
        posix_spawnattr_init(&attributes)
        var all = sigset_t()
        sigfillset(&all)
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setsigmask(&attributes, &none)
        var flags = POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK
        if ownGroup {
            posix_spawnattr_setpgroup(&attributes, 0)
            flags |= POSIX_SPAWN_SETPGROUP
        }
        posix_spawnattr_setflags(&attributes, Int16(flags))
        #if canImport(Glibc)
            return attributes
        #else
            return attributes!
        #endif
    }

    #if canImport(Glibc)
        /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later; not in Swift's Glibc
        /// module): closes every descriptor from the given one up in the child. Without it (an older
        /// glibc) a child inherits the parent's descriptors that lack `FD_CLOEXEC`.
        private static let closeFrom:
            (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
                guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
                return unsafeBitCast(
                    symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
            }()
    #endif

    /// Everything readable from `first` and `second` until both end, read as it comes (so neither
    /// pipe can fill and stall the writer).
    private static func readAll(_ first: Int32, _ second: Int32) -> ([UInt8], [UInt8]) {
        var streams = [(descriptor: first, bytes: [UInt8](), open: true), (descriptor: second, bytes: [UInt8](), open: true)]
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while streams.contains(where: \.open) {
            var polled = streams.map { pollfd(fd: $0.open ? $0.descriptor : -1, events: Int16(POLLIN), revents: 0) }
            guard poll(&polled, nfds_t(polled.count), -1) >= 0 || errno == EINTR else { break }
            for index in streams.indices where streams[index].open && polled[index].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { read(streams[index].descriptor, $0.baseAddress, $0.count) }
                if count > 0 {
                    streams[index].bytes += buffer[0..<count]
                } else if count == 0 || errno != EINTR {
                    streams[index].open = false
                }
            }
        }
        return (streams[0].bytes, streams[1].bytes)
    }

    /// A pipe's two ends, both closed on exec.
    private struct Pipe {
        let read: Int32
        let write: Int32

        init(program: String) throws(ChildProcessError) {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw ChildProcessError(program: program, code: errno) }
            read = ends[0]
            write = ends[1]
            // Another thread's child may start before this flag is set: children started here close
            // every descriptor above 2 anyway (``ChildProcess/closeFrom``).
            _ = fcntl(read, F_SETFD, FD_CLOEXEC)
            _ = fcntl(write, F_SETFD, FD_CLOEXEC)
        }

        func closeBoth() {
            close(read)
            close(write)
        }
    }
}

/// A child process that could not be started: the program and the `posix_spawn` error.
package struct ChildProcessError: Error, Sendable, CustomStringConvertible {
    /// The program that was to run.
    package let program: String
    /// The `errno`-style code `posix_spawn` (or `pipe`) returned.
    package let code: Int32

    /// "P could not be started: …".
    package var description: String { "\(program) could not be started (\(String(cString: strerror(code))))" }
}
