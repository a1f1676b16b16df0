import EntitlementSupport

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The write end of the pipe SIGINT and SIGTERM are written to (set once, before the handler is).
nonisolated(unsafe) private var signalPipeWriter: Int32 = -1

/// SIGINT and SIGTERM for the long-running commands (`serve`, `fleet-node`), handled so the process
/// ends in every state. The handler only writes the signal's number to a pipe (async-signal-safe,
/// whichever thread the kernel picks); a thread of its own reads it, so neither a starved Swift
/// concurrency pool nor a busy Dispatch queue can hold a signal back. The first asks for a graceful
/// stop and starts a watchdog that ends the process if the stop takes longer than its limit; a second
/// ends the process at once.
package enum TerminationSignals {
    /// Waits for the first SIGINT or SIGTERM and returns it; after it, a second such signal — or the
    /// graceful stop lasting past `limit` — ends the process (status 128 + the signal, or 1), saying
    /// so on standard error as `name`.
    package static func next(stopWithin limit: Duration, name: String) async -> Int32 {
        var ends: [Int32] = [0, 0]
        guard pipe(&ends) == 0 else { return await never() }
        signalPipeWriter = ends[1]
        for number in [SIGINT, SIGTERM] {
            var action = sigaction()
            #if canImport(Glibc)
                action.__sigaction_handler.sa_handler = { number in
                    var byte = UInt8(truncatingIfNeeded: number)
                    _ = write(signalPipeWriter, &byte, 1)
                }
            #else
                action.__sigaction_u.__sa_handler = { number in
                    var byte = UInt8(truncatingIfNeeded: number)
                    _ = write(signalPipeWriter, &byte, 1)
                }
            #endif
            action.sa_flags = SA_RESTART
            sigaction(number, &action, nil)
        }
        let reader = ends[0]
        return await withCheckedContinuation { continuation in
            OwnThread.start {
                let first = Int32(readSignal(reader))
                continuation.resume(returning: first)
                OwnThread.start {
                    OwnThread.sleep(for: limit)
                    StandardError.write("\(name): the stop took longer than \(limit); exiting\n")
                    _exit(1)
                }
                let second = Int32(readSignal(reader))
                StandardError.write("\(name): a second \(second == SIGINT ? "SIGINT" : "SIGTERM"); exiting at once\n")
                _exit(128 + second)
            }
        }
    }

    /// The next signal's number from the pipe (blocking; retried when interrupted; a pipe that fails
    /// otherwise reads as SIGTERM, so the process still ends).
    private static func readSignal(_ reader: Int32) -> UInt8 {
        var byte: UInt8 = 0
        while true {
            switch read(reader, &byte, 1) {
            case 1: return byte
            case -1 where errno == EINTR: continue
            default: return UInt8(SIGTERM)
            }
        }
    }

    /// No pipe could be made: the default actions stay, and a signal ends the process at once.
    private static func never() async -> Int32 {
        while true { try? await Task.sleep(for: .seconds(3_600)) }
    }
}
