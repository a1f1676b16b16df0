#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// A `URLSession`'s delegate that runs each exchange within a total deadline and reads its body up to a
/// limit, refusing it as soon as it passes the limit (by its `Content-Length`, or while it arrives):
/// a server that trickles bytes cannot hold an exchange past its deadline, and a huge answer costs at
/// most the limit in memory. Redirects are never followed (one could carry credentials elsewhere; it is
/// read as its status). Cancelling the calling task cancels the exchange.
///
/// The deadline, cancellation and the body limit end the exchange here, at once, and then cancel the
/// data task: the caller's wait never depends on `URLSession` calling back (a stalled or crashed
/// session's delegate queue holds no caller), and a call back that comes later finds nothing to answer.
/// Nor does a caller's thread ever wait on the session: `URLSession` makes, starts and cancels a task by
/// waiting for its own queue (busy while it sets up TLS, say, or wedged), so those happen on `tasks`, a
/// queue of this delegate's, never on a thread of Swift's shared pool.
package final class BoundedExchanges: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    /// How one exchange ended.
    package enum Outcome: Sendable {
        /// The whole answer, within the limit.
        case answered(HTTPURLResponse, Data)
        /// The answer's body passed the limit; reading stopped there.
        case tooLarge(HTTPURLResponse)
        /// The deadline passed before the answer was whole.
        case timedOut
        /// No HTTP answer: the connection failed, or the calling task was cancelled.
        case failed(URLError.Code?)
    }

    private struct Exchange {
        let answer: OneAnswer
        var data = Data()
    }

    private let lock = NSLock()
    private var running: [Int: Exchange] = [:]
    /// Where data tasks are made, started and cancelled (in that order for each).
    private let tasks: DispatchQueue
    /// The largest body read.
    package let bodyLimit: Int

    /// A delegate that reads bodies of at most `bodyLimit` bytes, making and cancelling its tasks on
    /// `tasks` (a serial queue of its own unless given).
    package init(bodyLimit: Int, tasks: DispatchQueue = DispatchQueue(label: "entitle.http.tasks")) {
        self.bodyLimit = max(bodyLimit, 1)
        self.tasks = tasks
    }

    /// The session the package's clients run their exchanges on, with this as its delegate: ephemeral,
    /// no cookies and no cache (every answer is the service's own, and nothing of one device's leaks into
    /// another's request), each request timing out after `timeout`, at most `connectionsPerHost` open
    /// connections to one host (nil: URLSession's default).
    package func session(timeout: Duration, connectionsPerHost: Int? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = Self.seconds(timeout)
        configuration.httpCookieAcceptPolicy = .never
        configuration.httpShouldSetCookies = false
        configuration.urlCache = nil
        if let connectionsPerHost { configuration.httpMaximumConnectionsPerHost = connectionsPerHost }
        return URLSession(configuration: configuration, delegate: self, delegateQueue: nil)
    }

    /// `duration` in seconds, as Foundation's time intervals count.
    package static func seconds(_ duration: Duration) -> TimeInterval {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// Runs `request` on `session` (whose delegate this is), ending it when `timeout` passes.
    package func exchange(_ request: URLRequest, on session: URLSession, within timeout: Duration) async -> Outcome {
        let box = TaskBox()
        let deadline = Task {
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { box.end(.timedOut, cancelling: cancel) }
        }
        defer { deadline.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let answer = OneAnswer(continuation)
                box.wait(answer)
                tasks.async { [self] in
                    guard !answer.isGiven else { return }  // ended before it started
                    let task = session.dataTask(with: request)
                    lock.withLock { running[task.taskIdentifier] = Exchange(answer: answer) }
                    if box.started(task) { task.resume() } else { forget(task) }
                }
            }
        } onCancel: {
            box.end(.failed(.cancelled), cancelling: cancel)
        }
    }

    /// Answers `task`'s caller with `outcome` unless it was answered already, then cancels the task.
    private func end(_ task: URLSessionTask, _ outcome: Outcome) {
        lock.withLock { running.removeValue(forKey: task.taskIdentifier) }?.answer.give(outcome)
        cancel(task)
    }

    /// Cancels `task` on the tasks' queue, after its start.
    private func cancel(_ task: URLSessionTask) {
        tasks.async { [self] in forget(task) }
    }

    /// Forgets `task` and cancels it; called on the tasks' queue.
    private func forget(_ task: URLSessionTask) {
        lock.withLock { _ = running.removeValue(forKey: task.taskIdentifier) }
        task.cancel()
    }

    package func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) { completionHandler(nil) }

    package func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard response.expectedContentLength > Int64(bodyLimit) else { return completionHandler(.allow) }
        completionHandler(.cancel)
        end(dataTask, (response as? HTTPURLResponse).map(Outcome.tooLarge) ?? .failed(nil))
    }

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        let overflow = lock.withLock { () -> Bool in
            guard var exchange = running[dataTask.taskIdentifier] else { return false }
            guard exchange.data.count + data.count <= bodyLimit else { return true }
            running[dataTask.taskIdentifier] = nil  // appended without a copy of the bytes so far
            exchange.data.append(data)
            running[dataTask.taskIdentifier] = exchange
            return false
        }
        if overflow { end(dataTask, (dataTask.response as? HTTPURLResponse).map(Outcome.tooLarge) ?? .failed(nil)) }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let finished = lock.withLock { running.removeValue(forKey: task.taskIdentifier) }
        guard let finished else { return }
        let response = task.response as? HTTPURLResponse
        if let error {
            finished.answer.give((error as? URLError)?.code == .timedOut ? .timedOut : .failed((error as? URLError)?.code))
        } else if let response {
            finished.answer.give(.answered(response, finished.data))
        } else {
            finished.answer.give(.failed(nil))
        }
    }
}

/// One exchange's caller, answered once: by the session's call back, the deadline or cancellation,
/// whichever comes first.
private final class OneAnswer: @unchecked Sendable {
    private let lock = NSLock()
    private var waiting: CheckedContinuation<BoundedExchanges.Outcome, Never>?

    init(_ waiting: CheckedContinuation<BoundedExchanges.Outcome, Never>) { self.waiting = waiting }

    /// Whether the caller has its answer.
    var isGiven: Bool { lock.withLock { waiting == nil } }

    /// Answers the caller with `outcome`, unless it has its answer.
    func give(_ outcome: BoundedExchanges.Outcome) {
        lock.withLock { () -> CheckedContinuation<BoundedExchanges.Outcome, Never>? in
            defer { waiting = nil }
            return waiting
        }?.resume(returning: outcome)
    }
}

/// One exchange's caller and data task, so the deadline and cancellation can end it from any thread,
/// also before it has a task, or a caller (a task cancelled before it waits).
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var answer: OneAnswer?
    private var task: URLSessionDataTask?
    /// How the exchange ended, once it has.
    private var ended: BoundedExchanges.Outcome?

    /// The caller waits for `answer`; answered at once if the exchange has ended.
    func wait(_ answer: OneAnswer) {
        let ended = lock.withLock {
            self.answer = answer
            return self.ended
        }
        if let ended { answer.give(ended) }
    }

    /// The exchange's task was made: false if the exchange has ended (the task is not to start).
    func started(_ task: URLSessionDataTask) -> Bool {
        lock.withLock {
            guard ended == nil else { return false }
            self.task = task
            return true
        }
    }

    /// Ends the exchange with `outcome` unless it has ended: answers the caller, and has its task cancelled.
    func end(_ outcome: BoundedExchanges.Outcome, cancelling cancel: (URLSessionTask) -> Void) {
        let (answer, task) = lock.withLock { () -> (OneAnswer?, URLSessionDataTask?) in
            guard ended == nil else { return (nil, nil) }
            ended = outcome
            return (self.answer, self.task)
        }
        answer?.give(outcome)
        if let task { cancel(task) }
    }
}
