#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A thread of its own for a call that blocks (waiting for a file lock, a child process, a pipe):
/// Swift concurrency runs every task on a few threads — one per core — so one blocking call holds a
/// share of the whole process's async work, and two on a two-core machine stop it all (a test's
/// server then never answers the browser the test is waiting for).
package enum OwnThread {
    /// Runs `body` on a new thread and returns what it returns, leaving Swift concurrency's threads free.
    /// The wait ends when `body` does — a cancellation cannot interrupt a blocking call — so give it only
    /// calls that end on their own (a lock its holder releases or loses with its process, a child that
    /// exits or was killed).
    package static func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (done: CheckedContinuation<T, Never>) in
            start { done.resume(returning: body()) }
        }
    }

    /// Blocks the calling thread (one of this enum's, never Swift concurrency's) for `duration`,
    /// whatever signals interrupt the wait.
    package static func sleep(for duration: Duration) {
        let parts = duration.components
        var pause = timespec(tv_sec: Int(parts.seconds), tv_nsec: Int(parts.attoseconds / 1_000_000_000))
        var left = timespec()
        while nanosleep(&pause, &left) != 0 { pause = left }
    }

    /// Starts `body` on a new detached thread (on the calling thread when no thread can be made).
    package static func start(_ body: @escaping @Sendable () -> Void) {
        if !tryStart(body) { body() }
    }

    /// Starts `body` on a new detached thread; false, without running it, when no thread can be made.
    package static func tryStart(_ body: @escaping @Sendable () -> Void) -> Bool {
        let context = Unmanaged.passRetained(Body(body)).toOpaque()
        #if canImport(Glibc)
            var thread = pthread_t()
        #else
            var thread: pthread_t?
        #endif
        let result = pthread_create(&thread, nil, { context in
            #if canImport(Glibc)
                guard let context else { return nil }
            #endif
            Unmanaged<Body>.fromOpaque(context).takeRetainedValue().body()
            return nil
        }, context)
        guard result == 0 else {
            Unmanaged<Body>.fromOpaque(context).release()
            return false
        }
        #if canImport(Glibc)
            pthread_detach(thread)
        #else
            if let thread { pthread_detach(thread) }
        #endif
        return true
    }

    /// The calling thread's id, as a number to compare (it may be reused once the thread ends).
    package static var currentID: UInt {
        #if canImport(Glibc)
            UInt(pthread_self())
        #else
            UInt(bitPattern: pthread_self())
        #endif
    }

    private final class Body: Sendable {
        let body: @Sendable () -> Void
        init(_ body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
