import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementProviders
import EntitlementSimulator
import EntitlementSupport
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// The server-based authorization provider against a real HTTP server on loopback: what it sends,
/// what it accepts, its bound on concurrent requests, and the stale-answer guard on a real engine.
@Suite("Server-based authorization")
struct ServerAuthorizationProviderTests {
    /// What the test server saw and how it answers.
    final class Service: Sendable {
        let requests = Mutex<[HTTPRequest]>([])
        let running = Mutex((now: 0, most: 0))
        let gate = Mutex<[CheckedContinuation<Void, Never>]>([])
        let holds = Mutex(false)
        let answer: @Sendable (HTTPRequest) -> HTTPResponse

        init(answer: @escaping @Sendable (HTTPRequest) -> HTTPResponse) { self.answer = answer }

        func respond(_ request: HTTPRequest) async -> HTTPResponse {
            requests.withLock { $0.append(request) }
            running.withLock {
                $0.now += 1
                $0.most = max($0.most, $0.now)
            }
            if holds.withLock({ $0 }) { await withCheckedContinuation { continuation in gate.withLock { $0.append(continuation) } } }
            running.withLock { $0.now -= 1 }
            return answer(request)
        }

        func release() {
            holds.withLock { $0 = false }
            for waiter in gate.withLock({ waiters in defer { waiters = [] }; return waiters }) { waiter.resume() }
        }

        var held: Int { gate.withLock { $0.count } }
    }

    static func json(_ status: Int, _ text: String) -> HTTPResponse {
        HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", "application/json")]), body: Array(text.utf8))
    }

    static let session = ProviderSession(deviceID: "tv 1", requestorID: "sim-requestor", sessionID: "tv 1#7")

    @Test func itPostsTheDeviceSessionAndResourceDecoratedAndWithoutCookies() async throws {
        let service = Service { _ in Self.json(201, #"{"auth":"abc:def","channel_data":{"user":1}}"#) }
        let server = try HTTPServer { await service.respond($0) }
        defer { OwnThread.start { server.stop() } }  // a defer cannot await shutdown()
        let provider = ServerAuthorizationProvider(
            url: server.url + "/pusher/auth", resources: ["private-match"], transport: HTTPProviderTransport.patient,
            decorate: { $0.headers["X-MyCustom-AuthTokenHeader"] = "some-authentication-token" })
        let answer = await provider.credentials(for: "private-match", Self.session)
        expectEqual(answer, .success(ProviderCredentials(token: #"{"auth":"abc:def","channel_data":{"user":1}}"#)))
        let request = try #require(service.requests.withLock { $0.first })
        #expect(request.method == "POST" && request.path == "/pusher/auth")
        expectEqual(request.headers["Content-Type"], "application/x-www-form-urlencoded")
        expectEqual(request.headers["X-MyCustom-AuthTokenHeader"], "some-authentication-token")
        #expect(request.headers["Cookie"] == nil)
        expectEqual(String(decoding: request.body, as: UTF8.self), "device_id=tv%201&session_id=tv%201%237&resource=private-match")
        await expectEqual(provider.verify(Self.session), .success(ProviderView(resources: ["private-match"])))
    }

    @Test(arguments: [
        (200, #"{"ok":true}"#, "application/json", true, ""),
        (200, #"["not", "an", "object"]"#, "application/json", false, "not a JSON object"),
        (200, "<html>", "text/html", false, "not a JSON object"),
        (403, #"{"error":"forbidden","message":"Not in your plan."}"#, "application/json", false, "Not in your plan."),
        (401, "", "text/plain", false, "The authorization server refused 'r'."),
        (302, "", "text/plain", false, "answered HTTP 302"),
        (500, #"{"ok":true}"#, "application/json", false, "answered HTTP 500"),
    ])
    func onlyA200Or201WithAJSONObjectAuthorizes(status: Int, body: String, type: String, authorized: Bool, said: String) async throws {
        let server = try HTTPServer { _ in
            var headers = [("Content-Type", type)]
            if status == 302 { headers.append(("Location", "http://127.0.0.1:1/elsewhere")) }
            return HTTPResponse(status: status, headers: HTTPHeaders(headers), body: Array(body.utf8))
        }
        defer { OwnThread.start { server.stop() } }  // a defer cannot await shutdown()
        let answer = await ServerAuthorizationProvider(url: server.url + "/auth", resources: ["r"], transport: HTTPProviderTransport.patient).credentials(for: "r", Self.session)
        switch answer {
        case .success(let credentials):
            #expect(authorized && credentials.token == body)
        case .failure(let failure):
            #expect(!authorized)
            #expect(failure.message.contains(said), "\(failure)")
        }
    }

    @Test func aServiceNobodyAnswersIsANetworkFailure() async throws {
        var listener: HTTPListener? = try HTTPListener()
        let url = "http://127.0.0.1:\(listener!.port)/auth"
        listener = nil  // bound, then closed: nothing listens there
        _ = listener
        let answer = await ServerAuthorizationProvider(url: url, resources: ["r"]).credentials(for: "r", Self.session)
        expectEqual(answer, .failure(.networkFailure))
    }

    /// A service that answers 200 with `{}` but holds every request until released, and a provider
    /// posting to it (stop the server when done).
    static func heldService() throws -> (Service, HTTPServer, ServerAuthorizationProvider) {
        let service = Service { _ in Self.json(200, "{}") }
        service.holds.withLock { $0 = true }
        let server = try HTTPServer { await service.respond($0) }
        let provider = ServerAuthorizationProvider(url: server.url + "/auth", resources: ["r"], transport: HTTPProviderTransport.patient)
        return (service, server, provider)
    }

    @Test func atMostFiveRequestsRunAtOnce() async throws {
        let (service, server, provider) = try Self.heldService()
        defer { OwnThread.start { server.stop() } }  // a defer cannot await shutdown()
        expectEqual(provider.concurrentLimit, 5)
        let asks = (0..<8).map { _ in Task { await provider.credentials(for: "r", Self.session) } }
        while service.held < 5 { try await Task.sleep(for: .milliseconds(5)) }
        try await Task.sleep(for: .milliseconds(100))
        expectEqual(service.held, 5, "the other three wait in the provider")
        service.release()
        for ask in asks { #expect(await ask.value == .success(ProviderCredentials(token: "{}"))) }
        expectEqual(service.running.withLock { $0.most }, 5)
        expectEqual(service.requests.withLock { $0.count }, 8)
    }

    /// A request waiting for a place whose task is cancelled (the engine's deadline passed) ends at once
    /// and is never sent; the others go on.
    @Test func aCancelledWaitingRequestIsNeverSent() async throws {
        let (service, server, provider) = try Self.heldService()
        defer { OwnThread.start { server.stop() } }  // a defer cannot await shutdown()
        let running = (0..<5).map { _ in Task { await provider.credentials(for: "r", Self.session) } }
        while service.held < 5 { try await Task.sleep(for: .milliseconds(5)) }
        let waiting = Task { await provider.credentials(for: "r", Self.session) }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await expectEqual(waiting.value, .failure(.networkFailure), "ended while the five still run")
        service.release()
        for ask in running { #expect(await ask.value == .success(ProviderCredentials(token: "{}"))) }
        expectEqual(service.requests.withLock { $0.count }, 5, "the cancelled request never reached the service")
        // It took no place for good: five more run at once (with a place lost, the fifth would wait).
        service.holds.withLock { $0 = true }
        let next = (0..<5).map { _ in Task { await provider.credentials(for: "r", Self.session) } }
        let started = ContinuousClock.now
        while service.held < 5, ContinuousClock.now - started < .seconds(30) { try await Task.sleep(for: .milliseconds(5)) }
        expectEqual(service.held, 5)
        service.release()
        for ask in next { #expect(await ask.value == .success(ProviderCredentials(token: "{}"))) }
    }

    /// libPusher ignores an answer for a socket id that has since changed: here a new `setRequestor`
    /// ends the request at once, and its late answer changes nothing.
    @Test func anAnswerForASessionThatHasSinceChangedIsIgnored() async throws {
        let service = Service { _ in Self.json(200, #"{"auth":"late"}"#) }
        let server = try HTTPServer { await service.respond($0) }
        defer { OwnThread.start { server.stop() } }  // a defer cannot await shutdown()
        let clock = ManualClock()
        let simulator = Simulator(clock: clock)
        let provider = ServerAuthorizationProvider(url: server.url + "/auth", resources: ["r"], transport: HTTPProviderTransport.patient)
        let enabler = AccessEnabler(
            backend: simulator.backend, environment: .deterministic(clock: clock), settings: .simulated,
            providers: try ProviderChain([.provider(provider), .tvProvider]))
        try await expectEqual(enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: [])), .setRequestorComplete(success: true))
        service.holds.withLock { $0 = true }
        let stream = await enabler.answeredCallbacks()
        let asked = await enabler.getAuthorization("r")
        while service.held < 1 { try await Task.sleep(for: .milliseconds(5)) }
        let body = String(decoding: service.requests.withLock { $0.last!.body }, as: UTF8.self)
        #expect(body.contains("session_id=device-1%231"))
        try await expectEqual(enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: [])), .setRequestorComplete(success: true))
        service.release()
        await enabler.whenIdle()
        var answers: [Callback] = []
        for await answered in stream where answered.answering.contains(asked) {
            answers.append(answered.callback)
            break
        }
        expectEqual(answers.first?.name, "tokenRequestFailed", "ended by the new setRequestor: \(answers)")
        // The late answer reached no one: a fresh request is a new session's.
        try await expectEqual(enabler.answer(to: .getAuthorization(resource: "r", data: [:])), .setToken(token: #"{"auth":"late"}"#, resource: "r"))
        let sessions = service.requests.withLock { $0.map { String(decoding: $0.body, as: UTF8.self) } }
        // The new session is named by the second configuration's operation: 4 (the first verified, 2, and asked for r, 3).
        expectEqual(sessions.last?.contains("session_id=device-1%234"), true, "\(sessions)")
    }
}
