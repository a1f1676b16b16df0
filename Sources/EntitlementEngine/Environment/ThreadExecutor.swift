import Dispatch
import EntitlementSupport
import Synchronization

/// A thread of its own that runs, one at a time, the jobs of every task that prefers it.
///
/// A session's work hands off many times — the caller to the engine, the engine to a backend
/// request's task, the answer back to the engine, the engine back to the waiting caller. On Swift's
/// shared pool each hand-off can wake another thread (the kernel switching threads, tens of
/// microseconds on a busy machine). When the caller runs with this executor as its preference
/// (`withTaskExecutorPreference(_:operation:)`) and the engine's tasks prefer it too
/// (``EngineEnvironment/taskExecutor``), every hand-off is a push onto this thread's queue: an engine
/// (a default actor) runs where the task calling it prefers, and the engine's backend and provider
/// tasks start here. Several sessions may share one executor (a server keeps one per core, say);
/// their work then takes turns on its thread.
///
/// ``shutdown()`` ends the thread once the jobs queued before it have run; a job enqueued after that
/// runs on Swift's shared pool, so no task that prefers a stopped executor is ever stranded. The thread
/// keeps its executor until then: make executors for the process's life (one per core), or shut each
/// down when its sessions are done.
public final class ThreadExecutor: TaskExecutor, Sendable {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var next = 0
        var stopping = false
    }

    private let queue = Mutex(Queue())
    /// One signal per job queued, and one for ``shutdown()``: the thread sleeps only when none is pending.
    private let pending = DispatchSemaphore(value: 0)

    /// Why an executor could not be made.
    public struct NoThread: Error, Sendable, CustomStringConvertible {
        /// The system's reason.
        public let description: String
    }

    /// Starts the executor's thread.
    /// - Throws: ``NoThread`` when the system makes no more threads.
    public init() throws(NoThread) {
        guard OwnThread.tryStart({ [self] in runJobs() }) else {
            throw NoThread(description: "the system made no thread for the executor")
        }
    }

    /// Queues `job` for the executor's thread (after ``shutdown()``, for Swift's shared pool).
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = queue.withLock { queue -> Bool in
            guard !queue.stopping else { return false }
            queue.jobs.append(job)
            return true
        }
        guard queued else {
            globalConcurrentExecutor.enqueue(job)
            return
        }
        pending.signal()
    }

    /// Ends the thread once the jobs queued before this call have run; later jobs run on Swift's
    /// shared pool. Returns at once.
    public func shutdown() {
        let first = queue.withLock { queue -> Bool in
            defer { queue.stopping = true }
            return !queue.stopping
        }
        if first { pending.signal() }
    }

    /// Runs jobs as they come until ``shutdown()``; sleeps while there is none.
    private func runJobs() {
        let me = asUnownedTaskExecutor()
        while true {
            pending.wait()
            enum Next {
                case run(UnownedJob)
                case stop
                case wait
            }
            let next = queue.withLock { queue -> Next in
                if queue.next < queue.jobs.count {
                    let job = queue.jobs[queue.next]
                    queue.next += 1
                    if queue.next == queue.jobs.count {
                        queue.jobs.removeAll(keepingCapacity: true)
                        queue.next = 0
                    }
                    return .run(job)
                }
                return queue.stopping ? .stop : .wait
            }
            switch next {
            case .run(let job): job.runSynchronously(on: me)
            case .stop: return
            case .wait: continue
            }
        }
    }
}
