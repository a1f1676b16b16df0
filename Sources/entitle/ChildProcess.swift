import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A child process started with `posix_spawnp` and reaped with `waitpid`: signals go to a pid that is
/// known to be this child until it is reaped, and every wait for it ends (``waitForExit(upTo:)``).
final class ChildProcess: Sendable {
    /// The child's process id.
    let pid: pid_t
    /// Whether the child was reaped (then its pid may belong to another process: no more signals).
    private let reaped = Mutex(false)

    private init(pid: pid_t) { self.pid = pid }

    /// Starts `program` (looked up in `PATH` unless it holds a `/`) with `arguments`, its standard
    /// input from /dev/null, its output and errors appended to `output` and `errors` (or /dev/null).
    static func spawn(_ program: String, _ arguments: [String], output: String? = nil, errors: String? = nil) throws(FleetError)
        -> ChildProcess
    {
        #if canImport(Glibc)
            var actions = posix_spawn_file_actions_t()
        #else
            var actions: posix_spawn_file_actions_t?
        #endif
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, output ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_addopen(&actions, 2, errors ?? "/dev/null", O_WRONLY | O_CREAT | O_APPEND, 0o600)
        let argv = ([program] + arguments).map { strdup($0) }
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let result = posix_spawnp(&pid, program, &actions, nil, argv + [nil], environ)
        guard result == 0 else { throw FleetError("\(program) could not be started (posix_spawn error \(result))") }
        return ChildProcess(pid: pid)
    }

    /// Sends `signal`, unless the child was already reaped.
    func send(_ signal: Int32) {
        reaped.withLock { reaped in
            if !reaped { _ = kill(pid, signal) }
        }
    }

    /// Whether the child exited within `limit` (it is reaped then); checks every 20 ms.
    func waitForExit(upTo limit: Duration) async -> Bool {
        let deadline = ContinuousClock.now + limit
        while true {
            let exited = reaped.withLock { reaped -> Bool in
                if reaped { return true }
                var status: Int32 = 0
                let result = waitpid(pid, &status, WNOHANG)
                // -1: not our child any more (reaped elsewhere); pid: it exited now.
                if result == pid || result == -1 { reaped = true }
                return reaped
            }
            if exited { return true }
            if ContinuousClock.now >= deadline { return false }
            try? await Task.sleep(for: .milliseconds(20))
        }
    }

    /// Kills the child (continuing it first, should it be stopped) and waits until it is reaped.
    func killAndReap() async {
        send(SIGCONT)
        send(SIGKILL)
        _ = await waitForExit(upTo: .seconds(10))
    }
}
