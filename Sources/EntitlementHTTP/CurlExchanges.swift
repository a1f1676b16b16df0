import CEntitlementCurl
import EntitlementSupport
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// HTTP exchanges on libcurl's multi interface, run by one thread of their own: no Dispatch source,
/// no `URLSession`. The thread adds each request to curl's multi handle, lets curl move every transfer
/// on, and waits in `curl_multi_poll` for a socket, curl's own timers, the next deadline or a wakeup
/// from a caller — so each exchange's deadline, its cancellation and its body limit are decided here,
/// by code that owns every transfer, and the caller's wait never depends on another party calling back.
///
/// A body is read up to `bodyLimit` bytes (refused at once when its `Content-Length` says more, or as
/// soon as it passes the limit); redirects are never followed; only `http` and `https` are spoken; the
/// system's certificate store is trusted; no cookie or cache is kept.
package final class CurlExchanges: @unchecked Sendable {
    /// How one exchange ended.
    package enum Outcome: Sendable, Equatable {
        /// The whole answer: its status, its `Content-Type` (empty when it had none) and its body.
        case answered(status: Int, contentType: String, body: [UInt8])
        /// The answer's body passed the limit; reading stopped there.
        case tooLarge(status: Int)
        /// The deadline passed before the answer was whole.
        case timedOut
        /// The calling task was cancelled.
        case cancelled
        /// No HTTP answer: curl's result code (`CURLcode`), or ``refusedCode`` when curl would not take the request.
        case failed(code: Int32)
    }

    /// One request as sent.
    package struct Request: Sendable {
        /// `GET`, `POST`, `DELETE`, …
        package var method: String
        /// The whole URL.
        package var url: String
        /// Header fields, each sent once as `name: value`.
        package var headers: [(name: String, value: String)]
        /// The body (none when empty).
        package var body: [UInt8]

        /// A request.
        package init(method: String, url: String, headers: [(name: String, value: String)], body: [UInt8]) {
            self.method = method
            self.url = url
            self.headers = headers
            self.body = body
        }
    }

    /// Why libcurl cannot be used in this process, or nil when it can (it is loaded on first use).
    package static var unavailable: String? {
        guard entitle_curl_load() != 0 else { return nil }
        return entitle_curl_problem().map { String(cString: $0) } ?? "libcurl is not loaded"
    }

    /// The code of a request curl would not take (an option refused, no memory): no `CURLcode` has it.
    package static let refusedCode: Int32 = -1

    /// The largest body read.
    package let bodyLimit: Int
    private let multi: UnsafeMutableRawPointer
    private let lock = NSLock()
    /// Exchanges to start and exchanges to drop, handed to the thread (under `lock`).
    private var starting: [CurlExchange] = []
    private var dropping: [CurlExchange] = []
    private var stopping = false
    /// Set by the thread (under `lock`) as it frees the multi handle: no wakeup after that.
    private var closed = false
    /// The transfers curl runs, by their handle: the thread's alone.
    private var running: [UnsafeMutableRawPointer: CurlExchange] = [:]

    /// Exchanges with at most `connectionsPerHost` connections open to one host, or nil when libcurl
    /// is not available (``unavailable`` says why).
    package init?(bodyLimit: Int, connectionsPerHost: Int) {
        guard let multi = entitle_curl_multi_new(connectionsPerHost) else { return nil }
        self.multi = multi
        self.bodyLimit = max(bodyLimit, 1)
        let thread = Thread { [self] in run() }
        thread.name = "entitle.curl"
        thread.start()
    }

    /// Ends the thread once no exchange runs; an exchange asked for afterwards fails at once.
    package func stop() {
        lock.withLock {
            stopping = true
            if !closed { _ = entitle_curl_multi_wakeup(multi) }
        }
    }

    /// Runs `request`, ending it when `timeout` passes or the calling task is cancelled.
    package func exchange(_ request: Request, within timeout: Duration) async -> Outcome {
        let exchange = CurlExchange(request, deadline: ContinuousClock.now + timeout, timeout: timeout, bodyLimit: bodyLimit)
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                exchange.wait(continuation)
                let accepted = lock.withLock {
                    guard !stopping else { return false }
                    starting.append(exchange)
                    _ = entitle_curl_multi_wakeup(multi)
                    return true
                }
                if !accepted { exchange.answer(.cancelled) }
            }
        } onCancel: {
            exchange.answer(.cancelled)
            lock.withLock {
                guard !closed else { return }
                dropping.append(exchange)
                _ = entitle_curl_multi_wakeup(multi)
            }
        }
    }

    // MARK: - The thread

    private func run() {
        while true {
            let (starts, drops, stop) = lock.withLock { () -> ([CurlExchange], [CurlExchange], Bool) in
                defer {
                    starting.removeAll()
                    dropping.removeAll()
                }
                return (starting, dropping, stopping)
            }
            for exchange in drops { remove(exchange) }
            for exchange in starts where !exchange.isAnswered { start(exchange) }
            _ = entitle_curl_multi_perform(multi)
            var handle: UnsafeMutableRawPointer?
            var result: Int32 = 0
            while entitle_curl_multi_next_ended(multi, &handle, &result) == 1 {
                guard let handle, let exchange = running[handle] else { continue }
                exchange.answer(exchange.outcome(result, status: entitle_curl_request_status(handle)))
                remove(exchange)
            }
            let now = ContinuousClock.now
            var nextDeadline = now + .seconds(1)
            for exchange in Array(running.values) {
                if exchange.deadline <= now {
                    exchange.answer(.timedOut)
                    remove(exchange)
                } else {
                    nextDeadline = min(nextDeadline, exchange.deadline)
                }
            }
            if stop {
                for exchange in Array(running.values) {
                    exchange.answer(.cancelled)
                    remove(exchange)
                }
                break
            }
            if entitle_curl_multi_poll(multi, Int32(clamping: max((nextDeadline - now).milliseconds, 0) + 1)) != 0 {
                usleep(10_000)  // curl could not wait (out of memory, say): try again shortly rather than spin
            }
        }
        lock.withLock {
            closed = true
            for exchange in starting { exchange.answer(.cancelled) }
            starting.removeAll()
            dropping.removeAll()
        }
        entitle_curl_multi_free(multi)
    }

    /// Hands `exchange` to curl, or answers it with why curl refused it.
    private func start(_ exchange: CurlExchange) {
        guard let handle = exchange.makeTransfer() else {
            return exchange.answer(.failed(code: Self.refusedCode))
        }
        guard entitle_curl_multi_add(multi, handle) == 0 else {
            entitle_curl_request_free(handle)
            return exchange.answer(.failed(code: Self.refusedCode))
        }
        exchange.handle = handle
        running[handle] = exchange
    }

    /// Takes `exchange`'s transfer from curl and frees it, if it has one.
    private func remove(_ exchange: CurlExchange) {
        guard let handle = exchange.handle else { return }
        exchange.handle = nil
        running[handle] = nil
        _ = entitle_curl_multi_remove(multi, handle)
        entitle_curl_request_free(handle)
    }
}
