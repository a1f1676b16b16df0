import EntitlementEngine
import EntitlementHTTP
import EntitlementProviders
import Foundation
import EntitlementTestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Every transport timeout is a total deadline for the exchange, however slowly the server trickles
/// its answer, and a body is refused as soon as it passes its limit, while it is read.
@Suite("Transport deadlines and body limits")
struct TransportDeadlineTests {
    /// 600 bytes promised, one every 200 ms: 120 s in all, never idle for long.
    static func trickle() throws -> SlowServer {
        try SlowServer(
            head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 600\r\n\r\n", chunk: Array(" ".utf8),
            every: .milliseconds(200), count: 600)
    }

    @Test(.timeLimit(.minutes(10)), arguments: HTTPFaultTests.stacks)
    func aTricklingAdobeAnswerEndsAtTheTransportsDeadline(stack: HTTPStack) async throws {
        let server = try Self.trickle()
        defer { server.stop() }
        let transport = HTTPV2Transport(baseURL: server.url, timeout: .seconds(1), pacing: .afterThrottleOnly, stack: stack)
        let started = ContinuousClock.now
        await #expect(throws: BackendError.timeout) {
            _ = try await transport.send(.configuration(serviceProvider: "sim-requestor"), context: V2RequestContext(bearer: "t"))
        }
        let elapsed = ContinuousClock.now - started
        // The trickle takes 120 s: an idle deadline would wait for all of it. Half of it leaves room for a
        // loaded machine's scheduling (4.9 s was seen in CI, 10.1 s on a slower machine) and still tells the two apart.
        #expect(elapsed < .seconds(60), "a total deadline, not an idle one: \(elapsed)")
    }

    @Test(.timeLimit(.minutes(10)), arguments: HTTPFaultTests.stacks)
    func aTricklingProviderAnswerEndsAtTheTransportsDeadline(stack: HTTPStack) async throws {
        let server = try Self.trickle()
        defer { server.stop() }
        let transport = HTTPProviderTransport(timeout: .seconds(1), stack: stack)
        let started = ContinuousClock.now
        let answer = await transport.send(
            V2OutgoingRequest(operation: "authorize", method: "POST", url: server.url + "/authorize", headers: [:], body: Array("r=1".utf8)))
        expectEqual(answer, .failure(.networkFailure))
        #expect(ContinuousClock.now - started < .seconds(60), "a total deadline, not an idle one (the trickle takes 120 s)")
    }

    /// The deadline and cancellation end an exchange themselves: a session that never calls its delegate
    /// back (its queue stalled, as a wedged HTTP stack's is) holds the caller no longer than they do.
    @Test(.timeLimit(.minutes(10)), arguments: [false, true])
    func anExchangeEndsThoughItsSessionNeverCallsBack(_ cancelled: Bool) async throws {
        let exchanges = BoundedExchanges(bodyLimit: 1024)
        let stalled = OperationQueue()
        stalled.isSuspended = true
        try await Self.expectEnded(cancelled: cancelled, on: exchanges, delegateQueue: stalled)
    }

    /// Nor does a caller wait on the session's own queue: a task is made and started on the exchanges'
    /// queue (here held, as a session busy or wedged holds its queue), and the deadline and cancellation
    /// answer the caller all the same.
    @Test(.timeLimit(.minutes(10)), arguments: [false, true])
    func anExchangeEndsThoughItsTaskIsNeverMade(_ cancelled: Bool) async throws {
        let held = DispatchQueue(label: "held")
        held.suspend()
        defer { held.resume() }  // the late start finds the exchange ended
        try await Self.expectEnded(cancelled: cancelled, on: BoundedExchanges(bodyLimit: 1024, tasks: held))
    }

    /// Runs an exchange with the trickling server on `exchanges`, cancelled after 100 ms or with a 300 ms
    /// deadline, and expects it ended so.
    static func expectEnded(cancelled: Bool, on exchanges: BoundedExchanges, delegateQueue: OperationQueue? = nil) async throws {
        let server = try Self.trickle()
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral, delegate: exchanges, delegateQueue: delegateQueue)
        defer { session.invalidateAndCancel() }
        let request = URLRequest(url: try #require(URL(string: server.url)))
        let exchange = Task { await exchanges.exchange(request, on: session, within: cancelled ? .seconds(3600) : .milliseconds(300)) }
        if cancelled {
            try await Task.sleep(for: .milliseconds(100))
            exchange.cancel()
        }
        switch await exchange.value {
        case .timedOut: #expect(!cancelled, "timed out")
        case .failed(let code): #expect(cancelled && code == .cancelled, "failed: \(String(describing: code))")
        case let outcome: Issue.record("\(outcome)")
        }
    }

    /// An answer that says nothing of its length and never stops: reading ends at the limit, long
    /// before the server is done (it was buffered whole before), and the client reads no more.
    @Test(.timeLimit(.minutes(10)), arguments: HTTPFaultTests.stacks, [false, true])
    func aHugeAnswerIsRefusedWhileItIsRead(stack: HTTPStack, _ announced: Bool) async throws {
        let length = announced ? "Content-Length: 1000000000\r\n" : "Connection: close\r\n"
        // 64 KiB a millisecond for as long as the client reads: a minute and more, 6.5 GB in all.
        let chunk = 64 * 1024, count = 100_000
        let server = try SlowServer(
            head: "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\(length)\r\n",
            chunk: [UInt8](repeating: 0x20, count: chunk), every: .milliseconds(1), count: count)
        defer { server.stop() }
        let transport = HTTPProviderTransport(timeout: .seconds(60), bodyLimit: 256 * 1024, stack: stack)
        let answer = await transport.send(
            V2OutgoingRequest(operation: "authorize", method: "POST", url: server.url + "/authorize", headers: [:], body: []))
        expectEqual(answer, .failure(.unknown("the answer is larger than 262144 bytes")))
        // Once refused, the client reads nothing more: within a second the server can write at most what
        // the sockets' buffers hold (a few MB), where a client still reading would take ~64 MB.
        try await Task.sleep(for: .milliseconds(200))
        let refused = server.bodyBytesWritten
        try await Task.sleep(for: .seconds(1))
        let later = server.bodyBytesWritten
        #expect(later - refused < 16 * 1024 * 1024, "the client stopped reading: \(refused) then \(later) bytes written")
        #expect(later < chunk * count, "refused long before the server was done")
    }
}
