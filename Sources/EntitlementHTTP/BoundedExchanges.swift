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
        var tooLarge = false
        var timedOut = false
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
            if !Task.isCancelled { box.timeOut(self) }
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

    fileprivate func markTimedOut(_ task: URLSessionTask) { update(task) { $0.timedOut = true } }

    private func update(_ task: URLSessionTask, _ change: (inout Exchange) -> Void) {
        lock.withLock {
            if var exchange = running[task.taskIdentifier] {
                change(&exchange)
                running[task.taskIdentifier] = exchange
            }
        }
    }

    package func urlSession(
        _ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void
    ) { completionHandler(nil) }

    package func urlSession(
        _ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        let tooLarge = response.expectedContentLength > Int64(bodyLimit)
        if tooLarge { update(dataTask) { $0.tooLarge = true } }
        completionHandler(tooLarge ? .cancel : .allow)
    }

    package func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        var overflow = false
        update(dataTask) { exchange in
            if exchange.data.count + data.count > bodyLimit {
                exchange.tooLarge = true
                exchange.data = Data()
                overflow = true
            } else {
                exchange.data.append(data)
            }
        }
        if overflow { dataTask.cancel() }
    }

    package func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        let finished = lock.withLock { running.removeValue(forKey: task.taskIdentifier) }
        guard let finished else { return }
        let response = task.response as? HTTPURLResponse
        if finished.tooLarge, let response {
            finished.answer.resume(returning: .tooLarge(response))
        } else if finished.timedOut {
            finished.answer.resume(returning: .timedOut)
        } else if let error {
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
    private var cancelled = false
    private var timedOut = false
    private weak var owner: BoundedExchanges?

    func set(_ task: URLSessionDataTask, _ owner: BoundedExchanges) {
        let (cancelNow, timedOutNow) = lock.withLock {
            self.task = task
            self.owner = owner
            return (cancelled, timedOut)
        }
        if timedOutNow { owner.markTimedOut(task) }
        if cancelNow || timedOutNow { task.cancel() }
    }

    func cancel() {
        let task = lock.withLock {
            cancelled = true
            return self.task
        }
        task?.cancel()
    }

    func timeOut(_ owner: BoundedExchanges) {
        let task = lock.withLock {
            timedOut = true
            return self.task
        }
        guard let task else { return }
        owner.markTimedOut(task)
        task.cancel()
    }
}
