import EntitlementEngine
import Foundation
import Synchronization

/// A small Redis client: a fixed set of connections, each on a thread of its own (blocking socket
/// calls never run on Swift concurrency's threads), commands spread over them in turn. The commands of
/// callers waiting for the same connection go out in one write (pipelined, up to 64 callers' at a
/// time) and each caller reads its own answers by its own deadline, so many callers on a few
/// connections do not each wait a round trip for the one before. A connection
/// that times out or breaks is dropped and opened again for the next command, and one the server
/// closed while it was idle is replaced before it is used, so a restarted server costs the commands
/// under way at that moment — each with a typed ``RedisError`` — and nothing after.
///
/// With `metrics`, every command (or pipeline) is timed — `entitle.redis.commands` (`command`: its
/// name, or `PIPELINE`; `outcome`: `ok`, `error` for an error answer, or the failure's code) — and
/// `entitle.redis.retries` (`reason`: `refused`, a passing refusal sent again) and
/// `entitle.redis.connects` (`again`: `false` for a lane's first connection, `true` for a reconnect)
/// are counted.
public final class RedisClient: RedisCommandSender {
    /// The configuration in force.
    public let configuration: RedisConfiguration
    /// Where the client's measurements go.
    public let metrics: (any EngineMetricsHandler)?
    private let lanes: [RedisLane]
    private let turn = Atomic<Int>(0)

    /// Whether ``pipeline(_:)`` sends commands again that the server refused for a passing reason.
    private let retriesPassingRefusals: Bool
    /// Whether this client times its commands (a cluster's node clients leave it to the cluster client).
    private let timesCommands: Bool

    /// A client for `configuration`; connections open on first use.
    public convenience init(_ configuration: RedisConfiguration = RedisConfiguration(), metrics: (any EngineMetricsHandler)? = nil) {
        self.init(configuration, metrics: metrics, retryingPassingRefusals: true, timingCommands: true)
    }

    init(_ configuration: RedisConfiguration, metrics: (any EngineMetricsHandler)?, retryingPassingRefusals: Bool, timingCommands: Bool) {
        self.configuration = configuration
        self.metrics = metrics
        retriesPassingRefusals = retryingPassingRefusals
        timesCommands = timingCommands
        lanes = (0..<configuration.connections).map { RedisLane(configuration, number: $0, metrics: metrics) }
    }

    deinit { close() }

    /// Sends one command and returns its answer; an error answer is ``RedisError/server(_:)``.
    public func send(_ command: [String]) async throws(RedisError) -> RESPValue {
        let answer = try await pipeline([command])[0]
        if case .error(let message) = answer { throw .answer(message) }
        return answer
    }

    /// ``send(_:)``: one server holds every key.
    public func send(_ command: [String], key: String?) async throws(RedisError) -> RESPValue { try await send(command) }

    /// ``pipeline(_:)``: one server holds every key.
    public func pipeline(_ commands: [[String]], key: String?) async throws(RedisError) -> [RESPValue] { try await pipeline(commands) }

    /// Sends `commands` back to back on one connection and returns their answers in order (error
    /// answers stay `.error` values: in a pipeline one refusal does not undo the others). A server that
    /// refuses every command for a passing reason (`RESPValue/isPassingRefusal`: `LOADING` after a
    /// restart, `BUSY` with a long script) ran none of them: they are sent again after a short pause,
    /// within the same command timeout.
    public func pipeline(_ commands: [[String]]) async throws(RedisError) -> [RESPValue] {
        guard !commands.isEmpty else { return [] }
        guard timesCommands, let metrics else { return try await sendPipeline(commands) }
        let started = ContinuousClock.now
        do throws(RedisError) {
            let answers = try await sendPipeline(commands)
            Self.time(commands, since: started, outcome: answers.contains(where: \.isErrorAnswer) ? "error" : "ok", on: metrics)
            return answers
        } catch {
            Self.time(commands, since: started, outcome: error.code.description, on: metrics)
            throw error
        }
    }

    /// Records a command's (or pipeline's) time.
    static func time(_ commands: [[String]], since started: ContinuousClock.Instant, outcome: String, on metrics: any EngineMetricsHandler) {
        let name = commands.count == 1 ? (commands[0].first ?? "").uppercased() : "PIPELINE"
        metrics.record(timer: "entitle.redis.commands", dimensions: [("command", name), ("outcome", outcome)], nanoseconds: (ContinuousClock.now - started).nanoseconds)
    }

    private func sendPipeline(_ commands: [[String]]) async throws(RedisError) -> [RESPValue] {
        var bytes: [UInt8] = []
        for command in commands { RESPValue.array(command.map(RESPValue.bulk)).encode(into: &bytes) }
        // The command's time runs from now, not from when its lane takes it up: commands queued behind a
        // server that hangs fail by their own deadline instead of one timeout after another.
        let deadline = ContinuousClock.now.advanced(by: configuration.commandTimeout)
        while true {
            let answers = try await attempt(bytes, answers: commands.count, until: deadline)
            guard retriesPassingRefusals, answers.allSatisfy(\.isPassingRefusal) else { return answers }
            let left = deadline - ContinuousClock.now
            guard left > .milliseconds(100) else { return answers }
            metrics?.increment(counter: "entitle.redis.retries", dimensions: [("reason", "refused")], by: 1)
            try? await Task.sleep(for: .milliseconds(100))
            guard !Task.isCancelled else { throw .cancelled }
        }
    }

    /// One sending of `bytes` on the next lane, answered by `deadline` or at once when the task is
    /// cancelled (a cancelled command not yet sent is never sent).
    private func attempt(_ bytes: [UInt8], answers count: Int, until deadline: ContinuousClock.Instant) async throws(RedisError) -> [RESPValue] {
        let lane = lanes[turn.wrappingAdd(1, ordering: .relaxed).oldValue % lanes.count]
        let waiter = RedisLane.Waiter()
        let result = await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard waiter.wait(continuation) else { return }
                lane.submit(RedisLane.Job(bytes: bytes, answers: count, deadline: deadline, done: waiter))
            }
        } onCancel: {
            waiter.finish(.failure(.cancelled))
        }
        return try result.get()
    }

    /// Closes every connection; commands waiting or sent later fail with ``RedisError/closed``.
    public func close() { for lane in lanes { lane.close() } }
}

/// One connection and the thread that drives it, taking jobs in order.
final class RedisLane: @unchecked Sendable {
    /// One batch of commands and who waits for its answers.
    struct Job {
        let bytes: [UInt8]
        let answers: Int
        /// When the command must have been answered by (set when it was sent).
        let deadline: ContinuousClock.Instant
        let done: Waiter
    }

    /// Who waits for a job: answered once, by the lane or by the caller's cancellation, whichever is first.
    final class Waiter: Sendable {
        private enum State {
            case created
            case waiting(CheckedContinuation<Result<[RESPValue], RedisError>, Never>)
            case finished
        }
        private let state = Mutex(State.created)

        /// Starts waiting; false (and `continuation` answered `cancelled`) when the caller was cancelled first.
        func wait(_ continuation: CheckedContinuation<Result<[RESPValue], RedisError>, Never>) -> Bool {
            let cancelled = state.withLock { state -> Bool in
                guard case .created = state else { return true }
                state = .waiting(continuation)
                return false
            }
            if cancelled { continuation.resume(returning: .failure(.cancelled)) }
            return !cancelled
        }

        /// Answers the waiter with `result`, unless it was answered already.
        func finish(_ result: Result<[RESPValue], RedisError>) {
            let continuation = state.withLock { state -> CheckedContinuation<Result<[RESPValue], RedisError>, Never>? in
                defer { state = .finished }
                if case .waiting(let continuation) = state { return continuation }
                return nil
            }
            continuation?.resume(returning: result)
        }

        /// Whether nobody waits any more (cancelled): the job need not be sent.
        var isFinished: Bool { state.withLock { if case .finished = $0 { true } else { false } } }
    }

    private let configuration: RedisConfiguration
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var jobs: [Job] = []
    private var closed = false
    // Used by the lane's thread only.
    private var connection: RedisConnection?

    private let metrics: (any EngineMetricsHandler)?
    private var connected = false

    init(_ configuration: RedisConfiguration, number: Int, metrics: (any EngineMetricsHandler)?) {
        self.metrics = metrics
        self.configuration = configuration
        let thread = Thread { [self] in run() }
        thread.name = "entitle-redis-\(number)"
        thread.start()
    }

    func submit(_ job: Job) {
        condition.lock()
        if closed {
            condition.unlock()
            job.done.finish(.failure(.closed))
            return
        }
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    func close() {
        condition.lock()
        closed = true
        condition.broadcast()
        condition.unlock()
    }

    /// The most jobs one write carries: the commands of callers waiting at the same time go out
    /// together (pipelined) and their answers come back in the order they were sent.
    static let batchLimit = 64

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty && !closed { condition.wait() }
            if closed {
                let left = jobs
                jobs.removeAll()
                condition.unlock()
                for job in left { job.done.finish(.failure(.closed)) }
                connection = nil
                return
            }
            let batch = jobs.prefix(Self.batchLimit).filter { !$0.done.isFinished }  // cancelled while it waited: never sent
            jobs.removeFirst(min(jobs.count, Self.batchLimit))
            condition.unlock()
            perform(batch)
        }
    }

    /// Sends the jobs' commands in one write and answers each job with its own answers, read by its
    /// own deadline. A job past its deadline before it is sent fails without being sent. When reading
    /// fails, the connection is dropped and that job and every job sent after it fail alike (whether
    /// the server ran their commands is unknown, as for any command whose answer was lost).
    private func perform(_ batch: [Job]) {
        guard let latest = batch.map(\.deadline).max() else { return }
        if ContinuousClock.now < latest {
            do throws(RedisError) {
                try connectIfNeeded(until: latest)
            } catch {
                // A connection still opening when the commands' time ran out: they timed out.
                for job in batch { job.done.finish(.failure(error.code == .connect && ContinuousClock.now >= job.deadline ? .timeout : error)) }
                return
            }
        }
        let now = ContinuousClock.now
        var sending: [Job] = []
        for job in batch {
            if now < job.deadline { sending.append(job) } else { job.done.finish(.failure(.timeout)) }
        }
        guard let earliest = sending.map(\.deadline).min() else { return }
        guard let connection else {
            // Unreachable on a monotonic clock (a job still in time means a connection was just opened);
            // answered all the same, so no caller waits for ever.
            for job in sending { job.done.finish(.failure(.timeout)) }
            return
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(sending.reduce(0) { $0 + $1.bytes.count })
        for job in sending { bytes += job.bytes }
        do throws(RedisError) {
            try connection.write(bytes, until: earliest)
        } catch {
            self.connection = nil  // never reuse a connection whose stream position is unknown
            for job in sending { job.done.finish(.failure(error)) }
            return
        }
        for (index, job) in sending.enumerated() {
            do throws(RedisError) {
                job.done.finish(.success(try connection.readAnswers(job.answers, until: job.deadline)))
            } catch {
                self.connection = nil
                for unanswered in sending[index...] { unanswered.done.finish(.failure(error)) }
                return
            }
        }
    }

    /// Opens the lane's connection unless an open one is at hand (one the server closed while it was
    /// idle is replaced).
    private func connectIfNeeded(until deadline: ContinuousClock.Instant) throws(RedisError) {
        if connection?.endedWhileIdle == true { connection = nil }
        guard connection == nil else { return }
        connection = try RedisConnection.open(configuration, until: deadline)
        metrics?.increment(counter: "entitle.redis.connects", dimensions: [("again", connected ? "true" : "false")], by: 1)
        connected = true
    }
}
