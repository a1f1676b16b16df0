/// Everything nondeterministic the engine needs, injected: the clock, the device identity and one
/// random source per purpose.
public struct EngineEnvironment: Sendable {
    /// The clock that stamps inputs and runs timers.
    public var clock: any EngineClock
    /// This device's id, sent with every backend request and bound into every token.
    public var deviceID: String
    /// Draws the 256-bit redirect `state` of each login and logout flow.
    public var redirectStateRandom: any RandomSource
    /// Where the engine's own tasks run — backend requests, providers, the platform, the mailbox's
    /// work for a cancelled caller: nil (the default) is Swift's shared pool (a backend request's task
    /// starts on the engine's actor, behind the step that sent it, and its request runs on the pool). A
    /// ``ThreadExecutor`` that the session's caller also prefers keeps the session's hand-offs on one thread.
    public var taskExecutor: (any TaskExecutor)? {
        get { executorBox?.executor }
        set { executorBox = newValue.map(ExecutorBox.init) }
    }

    /// Starts one of the engine's own tasks where ``taskExecutor`` says, copying the caller's task-local
    /// values. With no executor it is a plain task: `Task(executorPreference: nil)` would still mark the
    /// task as having a preference, and the runtime then takes the task's status lock at every hop
    /// (2 % of a cookbook session on the shared pool, lock and mutex together).
    @discardableResult
    func startTask(_ operation: sending @escaping () async -> Void) -> Task<Void, Never> {
        guard let executor = executorBox?.executor else { return Task(operation: operation) }
        return Task(executorPreference: executor, operation: operation)
    }

    /// Starts one of the engine's own tasks as `startTask(_:)` does, but with no executor it starts on
    /// `actor` after the job that starts it, rather than on a pool thread it has to wake.
    @discardableResult
    func startTask(on actor: isolated any Actor, _ operation: sending @escaping () async -> Void) -> Task<Void, Never> {
        guard let executor = executorBox?.executor else {
            return Task {
                _ = actor
                await operation()
            }
        }
        return Task(executorPreference: executor, operation: operation)
    }

    /// The executor behind one reference: every engine (and every resting session) carries an
    /// environment, and a word is smaller than an existential's five.
    private var executorBox: ExecutorBox?

    private final class ExecutorBox: Sendable {
        let executor: any TaskExecutor
        init(_ executor: any TaskExecutor) { self.executor = executor }
    }

    /// Creates an environment from its parts.
    public init(
        clock: any EngineClock, deviceID: String, redirectStateRandom: any RandomSource, taskExecutor: (any TaskExecutor)? = nil
    ) {
        self.clock = clock
        self.deviceID = deviceID
        self.redirectStateRandom = redirectStateRandom
        self.executorBox = taskExecutor.map(ExecutorBox.init)
    }

    /// Production: wall clock and the system CSPRNG.
    public static func live(deviceID: String) -> EngineEnvironment {
        EngineEnvironment(clock: SystemClock(), deviceID: deviceID, redirectStateRandom: SystemRandomSource())
    }
}
