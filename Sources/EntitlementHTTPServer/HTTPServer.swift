import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A small HTTP/1.1 server on 127.0.0.1: one thread accepts, one thread serves each connection
/// (keep-alive, pipelined requests one at a time, `Content-Length` or chunked bodies), and the handler
/// runs as a task. Limits answer with their status (`HTTPParseError`). At
/// `HTTPServerLimits.connections` — or with no descriptor left — a new connection is not turned away
/// while others merely wait: the one that has been quiet longest (idle between requests, or trickling a
/// request in, never one whose answer is being made) is closed to make room, so idle or slow clients
/// (slowloris) cannot shut others out; only when every connection is being answered is the new one
/// answered 503. When `accept` finds no descriptor left, the accept loop backs off instead of spinning.
/// ``shutdown()`` stops accepting, lets answers in progress finish for
/// `HTTPServerLimits.shutdownGrace`, cancels the rest and closes every connection. One
/// ``HTTPAccessLogEntry`` per answer goes to the log.
package final class HTTPServer: Sendable {
    /// Answers one request.
    package typealias Handler = @Sendable (HTTPRequest) async -> HTTPResponse

    /// The port listened on.
    package let port: UInt16
    /// The limits applied.
    package let limits: HTTPServerLimits
    /// `http://127.0.0.1:PORT`.
    package var url: String { "http://127.0.0.1:\(port)" }

    private let listener: Int32
    private let wake: (read: Int32, write: Int32)
    private let handler: Handler
    private let log: (@Sendable (HTTPAccessLogEntry) -> Void)?
    private let state = Mutex(State())
    /// Set once, by the first stop (under ``state``'s lock, so an admission under it sees it); the
    /// connections' threads read it without the lock.
    private let stopping = Atomic<Bool>(false)
    private let finished = DispatchGroup()
    /// The zero of ``Connection/lastActive``.
    private let startedAt = ContinuousClock.now

    /// The server's own bookkeeping, under ``state``: taken once when a connection opens and once when
    /// it closes, never per request (with a thread per connection, a lock taken per request is one
    /// every thread queues on).
    private struct State {
        var connections = 0
        /// Every open connection that counts against the limit (one closed to make room is forgotten here).
        var open: [UInt64: Connection] = [:]
        /// Every connection whose thread still runs: a shutdown cancels the answers they are making.
        var live: [UInt64: Connection] = [:]
        var nextConnection: UInt64 = 0
        var stopped = false
    }

    /// What the server and a connection's thread share about it, read and written without the
    /// server's lock.
    private final class Connection: Sendable {
        let fd: Int32
        /// When it last received a byte, in nanoseconds since the server started.
        let lastActive: Atomic<Int64>
        /// Whether a handler is answering it (such a connection is never closed to make room).
        let answering = Atomic<Bool>(false)
        /// The handler's task while it answers, for a shutdown to cancel.
        let task = Mutex<Task<HTTPResponse, Never>?>(nil)

        init(fd: Int32, lastActive: Int64) {
            self.fd = fd
            self.lastActive = Atomic(lastActive)
        }
    }

    /// Nanoseconds since the server started (saturating).
    private func clockReading() -> Int64 {
        let elapsed = (ContinuousClock.now - startedAt).components
        let (whole, overflow) = elapsed.seconds.multipliedReportingOverflow(by: 1_000_000_000)
        guard !overflow, whole <= .max - 1_000_000_000 else { return .max }
        return whole + elapsed.attoseconds / 1_000_000_000
    }

    /// Listens on 127.0.0.1:`port` (0: an ephemeral port, see ``port``) and starts serving.
    package convenience init(
        port: UInt16 = 0, limits: HTTPServerLimits = HTTPServerLimits(), log: (@Sendable (HTTPAccessLogEntry) -> Void)? = nil,
        handler: @escaping Handler
    ) throws(HTTPServerError) {
        try self.init(listener: try HTTPListener(port: port), limits: limits, log: log, handler: handler)
    }

    /// Starts serving on `listener` (bound first when the handler needs to know the URL).
    package init(
        listener listening: HTTPListener, limits: HTTPServerLimits = HTTPServerLimits(),
        log: (@Sendable (HTTPAccessLogEntry) -> Void)? = nil, handler: @escaping Handler
    ) throws(HTTPServerError) {
        let wake = try Socket.wakePipe()
        self.listener = listening.take()
        self.port = listening.port
        self.wake = wake
        self.limits = limits
        self.log = log
        self.handler = handler
        finished.enter()
        let thread = Thread { [self] in
            acceptLoop()
            finished.leave()
        }
        thread.name = "http-accept"
        thread.start()
    }

    /// How many connections are open.
    package var openConnections: Int { state.withLock { $0.connections } }

    /// Stops: no new connections; answers in progress get `HTTPServerLimits.shutdownGrace` to
    /// finish, then are cancelled; every connection is closed. Returns when all threads have ended.
    /// Calling it again waits for the first call's shutdown. The waiting happens on a thread of its
    /// own, never on Swift concurrency's (the handlers it waits for need that executor).
    package func shutdown() async {
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread {
                self.stop()
                done.resume()
            }.start()
        }
    }

    /// ``shutdown()`` for a thread that may block (a command's main thread after a signal). Never from
    /// Swift concurrency's threads: the handlers it waits for need them (with all of them waiting here,
    /// nothing would end) — async code calls ``shutdown()``.
    @available(*, noasync, message: "await shutdown() instead: stop() blocks the thread the handlers it waits for need")
    package func stop() {
        let first = state.withLock { _ in !stopping.exchange(true, ordering: .acquiringAndReleasing) }
        guard first else { return waitUntilStopped() }
        Socket.signal(wake.write)
        let graceEnds = DispatchTime.now() + .milliseconds(Int(limits.shutdownGrace.milliseconds))
        if finished.wait(timeout: graceEnds) == .timedOut {
            for connection in state.withLock({ Array($0.live.values) }) { connection.task.withLock { $0 }?.cancel() }
        }
        waitUntilStopped()
    }

    private func waitUntilStopped() {
        finished.wait()
        let closeNow = state.withLock { state -> Bool in
            defer { state.stopped = true }
            return !state.stopped
        }
        if closeNow {
            close(listener)
            close(wake.read)
            close(wake.write)
        }
    }

    // MARK: - Accepting

    private func acceptLoop() {
        var pause = 10  // ms, after `accept` found no descriptor left
        while true {
            switch Socket.waitReadable(listener, wake: wake.read, timeoutMilliseconds: 1000) {
            case .woken, .closed: return
            case .timedOut: continue
            case .readable:
                accepting: while true {
                    switch Socket.accept(listener) {
                    case .connection(let fd, let peer):
                        pause = 10
                        admit(fd, peer: peer)
                    case .noneWaiting:
                        break accepting
                    case .outOfDescriptors:
                        // The listener stays readable: without a pause the loop would spin. Make room by
                        // closing the quietest connection, then wait a little longer each time.
                        _ = makeRoom()
                        if Socket.pause(milliseconds: Int32(pause), wake: wake.read) { return }
                        pause = min(pause * 2, 1000)
                        break accepting
                    }
                }
            }
        }
    }

    private func admit(_ fd: Int32, peer: String) {
        let connection = Connection(fd: fd, lastActive: clockReading())
        let admitted = state.withLock { state -> UInt64? in
            guard !stopping.load(ordering: .acquiring) else { return nil }
            guard state.connections < limits.connections || Self.closeQuietest(&state) else { return nil }
            state.connections += 1
            state.nextConnection &+= 1
            state.open[state.nextConnection] = connection
            state.live[state.nextConnection] = connection
            return state.nextConnection
        }
        guard let id = admitted else {
            let busy = HTTPResponse.text(503, "The server is busy; try again.\n")
            _ = Socket.sendAll(fd, busy.serialized(keepAlive: false, date: HTTPDate.now()), timeoutMilliseconds: 100)
            close(fd)
            return
        }
        finished.enter()
        let thread = Thread { [self] in
            serve(connection, peer: peer)
            // Forgotten before it is closed: a descriptor in `open` is never a closed (or reused) one.
            state.withLock { state in
                state.live[id] = nil
                // Not counted twice: a connection closed to make room was forgotten then.
                if state.open.removeValue(forKey: id) != nil { state.connections -= 1 }
            }
            close(fd)
            finished.leave()
        }
        thread.name = "http-connection"
        thread.stackSize = 256 * 1024
        thread.start()
    }

    // MARK: - Serving a connection

    /// Closes the connection that has been quiet longest and is not being answered; whether there was one.
    private func makeRoom() -> Bool { state.withLock { Self.closeQuietest(&$0) } }

    private static func closeQuietest(_ state: inout State) -> Bool {
        let idle = state.open.filter { !$0.value.answering.load(ordering: .acquiring) }
        guard let quietest = idle.min(by: { $0.value.lastActive.load(ordering: .relaxed) < $1.value.lastActive.load(ordering: .relaxed) })
        else { return false }
        // Hung up now, forgotten now (it no longer counts against the limit); its thread closes it.
        Socket.hangUp(quietest.value.fd)
        state.open[quietest.key] = nil
        state.connections -= 1
        return true
    }

    /// Notes that `connection` received bytes, or started or finished being answered.
    private func note(_ connection: Connection, answering: Bool? = nil) {
        connection.lastActive.store(clockReading(), ordering: .relaxed)
        if let answering { connection.answering.store(answering, ordering: .releasing) }
    }

    private func serve(_ connection: Connection, peer: String) {
        let fd = connection.fd
        var parser = HTTPRequestParser(limits: limits)
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        var deadline = ContinuousClock.now + limits.idleTimeout
        var requestStarted = false
        while true {
            let step: HTTPRequestParser.Step
            do {
                step = try parser.next()
            } catch {
                refuse(fd, peer: peer, error)
                return
            }
            switch step {
            case .continueExpected:
                guard Socket.sendAll(fd, Array("HTTP/1.1 100 Continue\r\n\r\n".utf8)) else { return }
            case .request(let request):
                note(connection, answering: true)
                let goesOn = answer(request, on: connection, peer: peer)
                note(connection, answering: false)
                guard goesOn else { return }
                requestStarted = false
                deadline = ContinuousClock.now + limits.idleTimeout
            case .needMore:
                if parser.hasPartialRequest, !requestStarted {
                    requestStarted = true
                    deadline = ContinuousClock.now + limits.requestTimeout
                }
                let left = deadline - ContinuousClock.now
                switch Socket.waitReadable(fd, wake: wake.read, timeoutMilliseconds: Int32(clamping: max(left.milliseconds, 0))) {
                case .woken, .closed: return
                case .timedOut:
                    if ContinuousClock.now < deadline { continue }
                    if parser.hasPartialRequest { refuse(fd, peer: peer, .timedOut) }
                    return
                case .readable:
                    guard let count = Socket.receive(fd, into: &buffer) else { return }
                    note(connection)
                    parser.append(buffer[0..<count])
                }
            }
        }
    }

    /// Runs the handler and writes its answer; false when the connection ends here.
    private func answer(_ request: HTTPRequest, on connection: Connection, peer: String) -> Bool {
        let fd = connection.fd
        let started = ContinuousClock.now
        let response = run(request, for: connection)
        let keepAlive = request.keepsAlive && !stopping.load(ordering: .acquiring) && response.ending == .complete
        var bytes = response.serialized(keepAlive: keepAlive, date: HTTPDate.now(), includeBody: request.method != "HEAD")
        let written: Bool
        if case .resetMidBody(let bodyBytes) = response.ending {
            bytes.removeLast(min(max(response.body.count - max(bodyBytes, 0), 0), bytes.count))
            _ = Socket.sendAll(fd, bytes)
            Socket.resetOnClose(fd)  // the connection's thread closes it
            written = false
        } else {
            written = Socket.sendAll(fd, bytes)
        }
        log?(
            HTTPAccessLogEntry(
                peer: peer, method: request.method, target: request.target, status: response.status, bytes: response.body.count,
                duration: ContinuousClock.now - started))
        return written && keepAlive
    }

    /// The handler's answer, computed on a task this thread waits for (cancelled by a shutdown
    /// that outlasts its grace).
    private func run(_ request: HTTPRequest, for connection: Connection) -> HTTPResponse {
        let done = DispatchSemaphore(value: 0)
        let result = Mutex<HTTPResponse?>(nil)
        let handler = self.handler
        let task = Task {
            let response = await handler(request)
            result.withLock { $0 = response }
            done.signal()
            return response
        }
        connection.task.withLock { $0 = task }
        done.wait()
        connection.task.withLock { $0 = nil }
        return result.withLock { $0 } ?? .text(500, "No answer.\n")
    }

    private func refuse(_ fd: Int32, peer: String, _ error: HTTPParseError) {
        let response = HTTPResponse.text(error.status, error.description + "\n")
        _ = Socket.sendAll(fd, response.serialized(keepAlive: false, date: HTTPDate.now()), timeoutMilliseconds: 1000)
        log?(HTTPAccessLogEntry(peer: peer, method: "-", target: "-", status: error.status, bytes: response.body.count, duration: .zero))
    }
}
