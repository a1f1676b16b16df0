import CEntitlementCurl
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One exchange of ``CurlExchanges``: its request, its caller (answered once, by whichever comes first
/// of curl, the deadline and cancellation), and what curl has delivered of the answer so far.
///
/// The caller's side is guarded by a lock; the answer's bytes and the transfer handle are touched only
/// by the exchanges' thread (curl calls `receiveBody` and `receiveHeader` from inside its perform).
final class CurlExchange: @unchecked Sendable {
    let request: CurlExchanges.Request
    /// When the exchange ends unanswered, on the monotonic clock.
    let deadline: ContinuousClock.Instant
    private let timeout: Duration
    private let bodyLimit: Int

    private let lock = NSLock()
    private var caller: CheckedContinuation<CurlExchanges.Outcome, Never>?
    private var given: CurlExchanges.Outcome?

    /// The thread's alone: the transfer while curl runs it, and the answer so far.
    var handle: UnsafeMutableRawPointer?
    private var body: [UInt8] = []
    private var contentType = ""
    private var overflowed = false

    init(_ request: CurlExchanges.Request, deadline: ContinuousClock.Instant, timeout: Duration, bodyLimit: Int) {
        self.request = request
        self.deadline = deadline
        self.timeout = timeout
        self.bodyLimit = bodyLimit
    }

    // MARK: - The caller

    /// The caller waits on `continuation`; answered at once if the exchange has ended.
    func wait(_ continuation: CheckedContinuation<CurlExchanges.Outcome, Never>) {
        let ended = lock.withLock {
            caller = continuation
            return given
        }
        if let ended { answer(ended) }
    }

    /// Whether the exchange has ended.
    var isAnswered: Bool { lock.withLock { given != nil } }

    /// Ends the exchange with `outcome` unless it has ended, answering the caller if it waits.
    func answer(_ outcome: CurlExchanges.Outcome) {
        let (waiting, ended) = lock.withLock { () -> (CheckedContinuation<CurlExchanges.Outcome, Never>?, CurlExchanges.Outcome) in
            let ended = given ?? outcome
            given = ended
            let waiting = caller
            caller = nil
            return (waiting, ended)
        }
        waiting?.resume(returning: ended)
    }

    // MARK: - The thread

    /// The request as a curl transfer calling back into this exchange, or nil when curl refused it.
    func makeTransfer() -> UnsafeMutableRawPointer? {
        // `Expect:` and (without a body) `Content-Type:` remove what curl would add on its own.
        var lines = request.headers.map { "\($0.name): \($0.value)" }
        lines.append("Expect:")
        if request.body.isEmpty, !request.headers.contains(where: { $0.name.lowercased() == "content-type" }) {
            lines.append("Content-Type:")
        }
        let copies = lines.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        guard !copies.contains(nil) else { return nil }
        let pointers = copies.map { UnsafePointer($0) }
        let context = Unmanaged.passUnretained(self).toOpaque()
        return request.body.withUnsafeBytes { body in
            pointers.withUnsafeBufferPointer { headers in
                entitle_curl_request_new(
                    request.method, request.url, headers.baseAddress, Int32(headers.count), body.baseAddress, body.count,
                    Int(clamping: max(timeout.milliseconds, 1)), Int64(bodyLimit), CurlExchange.bodyArrived, CurlExchange.headerArrived,
                    context)
            }
        }
    }

    /// How the transfer ended, from curl's result code and the last status it read.
    func outcome(_ result: Int32, status: Int) -> CurlExchanges.Outcome {
        switch result {
        case 0 where status > 0: .answered(status: status, contentType: contentType, body: body)
        case Self.writeError where overflowed, Self.fileSizeExceeded: .tooLarge(status: status)
        case Self.timedOut: .timedOut
        default: .failed(code: result)
        }
    }

    static let writeError: Int32 = 23
    static let timedOut: Int32 = 28
    static let fileSizeExceeded: Int32 = 63

    /// Takes `count` bytes of the body; refuses (ending the transfer) the piece that passes the limit.
    private func receiveBody(_ bytes: UnsafePointer<CChar>, _ count: Int) -> Int {
        guard body.count + count <= bodyLimit else {
            overflowed = true
            return 0
        }
        body.append(contentsOf: UnsafeRawBufferPointer(start: bytes, count: count))
        return count
    }

    /// Reads one header line: a status line starts a new answer (an interim `100 Continue` has its
    /// own); `Content-Type` is kept.
    private func receiveHeader(_ bytes: UnsafePointer<CChar>, _ count: Int) -> Int {
        let line = UnsafeRawBufferPointer(start: bytes, count: count)
        if line.starts(with: "HTTP/".utf8) {
            contentType = ""
        } else if line.count > 13, String(decoding: line.prefix(13), as: UTF8.self).lowercased() == "content-type:" {
            contentType = String(decoding: line.dropFirst(13), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        }
        return count
    }

    private static let bodyArrived: entitle_curl_receive = { bytes, size, count, context in
        guard let bytes, let context else { return 0 }
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
        return exchange.receiveBody(bytes, size * count)
    }

    private static let headerArrived: entitle_curl_receive = { bytes, size, count, context in
        guard let bytes, let context else { return 0 }
        let exchange = Unmanaged<CurlExchange>.fromOpaque(context).takeUnretainedValue()
        return exchange.receiveHeader(bytes, size * count)
    }
}
