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
        let answer: CheckedContinuation<Outcome, Never>
        var data = Data()
    }

    private let lock = NSLock()
    private var running: [Int: Exchange] = [:]
    /// The largest body read.
    package let bodyLimit: Int

    /// A delegate that reads bodies of at most `bodyLimit` bytes.
    package init(bodyLimit: Int) { self.bodyLimit = max(bodyLimit, 1) }

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
            if !Task.isCancelled { box.timeOut() }
        }
        defer { deadline.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let task = session.dataTask(with: request)
                lock.withLock { running[task.taskIdentifier] = Exchange(answer: continuation) }
                box.set(task, self)
                task.resume()
            }
        } onCancel: {
            box.cancel()
        }
    }

    /// Answers `task`'s caller with `outcome` unless it was answered already, then cancels the task.
    fileprivate func end(_ task: URLSessionTask, _ outcome: Outcome) {
        let exchange = lock.withLock { running.removeValue(forKey: task.taskIdentifier) }
        exchange?.answer.resume(returning: outcome)
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
            finished.answer.resume(returning: (error as? URLError)?.code == .timedOut ? .timedOut : .failed((error as? URLError)?.code))
        } else if let response {
            finished.answer.resume(returning: .answered(response, finished.data))
        } else {
            finished.answer.resume(returning: .failed(nil))
        }
    }
}

/// The running data task, so cancellation and the deadline can reach it from another thread.
private final class TaskBox: @unchecked Sendable {
    private let lock = NSLock()
    private var task: URLSessionDataTask?
    private var owner: BoundedExchanges?
    /// How the exchange ended before its task was set, if it did.
    private var endedEarly: BoundedExchanges.Outcome?

    func set(_ task: URLSessionDataTask, _ owner: BoundedExchanges) {
        let ended = lock.withLock {
            self.task = task
            self.owner = owner
            return endedEarly
        }
        if let ended { owner.end(task, ended) }
    }

    /// The calling task was cancelled.
    func cancel() { end(.failed(.cancelled)) }

    /// The deadline passed.
    func timeOut() { end(.timedOut) }

    private func end(_ outcome: BoundedExchanges.Outcome) {
        let running = lock.withLock { () -> (URLSessionDataTask, BoundedExchanges)? in
            guard let task, let owner else {
                if endedEarly == nil { endedEarly = outcome }
                return nil
            }
            return (task, owner)
        }
        if let (task, owner) = running { owner.end(task, outcome) }
    }
}
