import EntitlementEngine
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// Runs each of its tests on a thread of its own at the lowest scheduling priority, off Swift
/// concurrency's shared pool: for tests that compute for seconds without waiting on a clock (fuzzing,
/// model checks, whole scenario runs on a manual clock).
///
/// On the shared pool (one thread per core: two on a two-core machine) those tests took the threads for
/// the first minute of a run, and the tests that wait on the wall clock — a server's deadline, an engine's
/// request timeout on the system clock — waited behind them for 40 s and more, and failed by the machine's
/// speed. Here they compute on threads the kernel runs only when the rest of the suite leaves a core free.
/// The test's own task runs on the thread (its body, and the actors it calls); tasks it starts
/// unstructured still run on the pool.
public struct BackgroundThreadTrait: TestTrait, SuiteTrait, TestScoping {
    /// Every test of a suite marked with it runs so.
    public var isRecursive: Bool { true }

    /// A scope for each test case (a suite's own scope is left alone: its tests get one each).
    public func scopeProvider(for test: Test, testCase: Test.Case?) -> Self? { testCase == nil ? nil : self }

    /// Runs `function` with a new ``ThreadExecutor`` as its task's executor, that thread's priority lowered first.
    public func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        let executor = try ThreadExecutor()
        defer { executor.shutdown() }
        try await withTaskExecutorPreference(executor) {
            #if os(Linux)
                setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 19)  // this thread's nice value
            #endif
            try await function()
        }
    }
}

extension Trait where Self == BackgroundThreadTrait {
    /// Runs each test on a thread of its own at the lowest priority (``BackgroundThreadTrait``).
    public static var backgroundThread: Self { Self() }
}
