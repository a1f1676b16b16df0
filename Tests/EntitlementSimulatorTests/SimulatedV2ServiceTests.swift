import EntitlementEngine
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
import Testing

/// The simulator as REST API V2 on the wire: registration, the bearer check, throttling per
/// device, and every operation's JSON; and the engine's ``V2Client`` on it.
@Suite("Simulated REST API V2 service and the V2 client")
struct SimulatedV2ServiceTests {
    /// A service and a valid bearer for it.
    static func registered(_ clock: ManualClock) async throws -> (SimulatedV2Service, String) {
        let service = SimulatedV2Service(simulator: Simulator(clock: clock))
        let context = V2RequestContext(forwardedFor: "198.51.100.7")
        let registration = try await service.send(
            .registerClient(softwareStatement: SimulatedClientRegistrar.softwareStatement, redirectURI: nil), context: context)
        let credentials = try V2ClientCredentials(json: try #require(registration.body))
        let issued = try await service.send(
            .accessToken(clientID: credentials.clientID, clientSecret: credentials.clientSecret), context: context)
        return (service, try V2AccessToken(json: try #require(issued.body)).accessToken)
    }

    @Test func theConfigurationListsTheWorldsMVPDs() async throws {
        let (service, bearer) = try await Self.registered(ManualClock())
        let answer = try await service.send(.configuration(serviceProvider: "sim-requestor"), context: V2RequestContext(bearer: bearer, deviceID: "device-1"))
        expectEqual(answer.status, 200)
        let configuration = try V2Configuration(json: try #require(answer.body))
        expectEqual(configuration.mvpds.map(\.id), ["acme-cable", "bluesky-tv", "coastal-fiber", "delta-satellite"])
        #expect(configuration.mvpds[0].enablePlatformServices && !configuration.mvpds[2].enablePlatformServices)
        let unknown = try await service.send(.configuration(serviceProvider: "nobody"), context: V2RequestContext(bearer: bearer, deviceID: "device-2"))
        expectEqual(unknown.status, 400)
        try expectEqual(V2EnhancedError(json: try #require(unknown.body)).code, "invalid_parameter_service_provider")
    }

    @Test func everyAPIRequestNeedsAValidBearer() async throws {
        let (service, _) = try await Self.registered(ManualClock())
        let answer = try await service.send(.configuration(serviceProvider: "sim-requestor"), context: V2RequestContext(bearer: "forged", deviceID: "d"))
        expectEqual(answer.status, 401)
        try expectEqual(V2EnhancedError(json: try #require(answer.body)).action, .applicationRegistration)
    }

    @Test func throttlingIsPerDeviceWithABurstOfTen() async throws {
        let clock = ManualClock()
        let (service, bearer) = try await Self.registered(clock)
        let device = V2RequestContext(bearer: bearer, deviceID: "tv", forwardedFor: "203.0.113.9")
        var statuses: [Int] = []
        for _ in 0..<11 { statuses.append(try await service.send(.configuration(serviceProvider: "sim-requestor"), context: device).status) }
        expectEqual(statuses, Array(repeating: 200, count: 10) + [429])
        let other = V2RequestContext(bearer: bearer, deviceID: "phone", forwardedFor: "203.0.113.10")
        try await expectEqual(service.send(.configuration(serviceProvider: "sim-requestor"), context: other).status, 200, "another device has its own bucket")
        await clock.advance(by: .seconds(1))
        try await expectEqual(service.send(.configuration(serviceProvider: "sim-requestor"), context: device).status, 200)
        try await expectEqual(service.send(.configuration(serviceProvider: "sim-requestor"), context: device).status, 429)
    }

    @Test func aDenialIsAnItemErrorUnderHTTP200AndAMissingProfileA403() async throws {
        let (service, bearer) = try await Self.registered(ManualClock())
        let context = V2RequestContext(bearer: bearer, deviceID: "device-1")
        let missing = try await service.send(.authorize(serviceProvider: "sim-requestor", mvpd: "acme-cable", resources: ["news-channel"]), context: context)
        expectEqual(missing.status, 403)
        let error = try V2EnhancedError(json: try #require(missing.body))
        #expect(error.code == "authenticated_profile_missing" && error.action == .authentication)
    }

    // MARK: - The client

    /// A client on a service, and the service.
    static func client(_ clock: ManualClock, credentials: any V2CredentialStore = InMemoryV2CredentialStore())
        -> (V2Client, SimulatedV2Service, Counter)
    {
        let counter = Counter()
        let service = SimulatedV2Service(simulator: Simulator(clock: clock), throttles: false)
        let client = V2Client(
            transport: CountingTransport(inner: service, counter: counter), softwareStatement: SimulatedClientRegistrar.softwareStatement,
            credentials: credentials, baseURL: "https://sp.sim", clock: clock)
        return (client, service, counter)
    }

    /// A client built without `devices:` still sends `X-Device-Info` wherever the contract requires it —
    /// registration and access tokens included — as an honest "unknown" description; a device the
    /// backend describes is sent as described.
    @Test func everyRequestThatNeedsXDeviceInfoCarriesIt() async throws {
        let clock = ManualClock()
        let seen = Mutex<[(String, V2DeviceInfo?)]>([])
        let service = SimulatedV2Service(simulator: Simulator(clock: clock), throttles: false)
        let recording = RecordingTransport(inner: service) { request, context in seen.withLock { $0.append((request.operation, context.deviceInfo)) } }
        let client = V2Client(transport: recording, softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock)
        let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-1")
        _ = try await client.perform(.configuration(context))
        _ = try? await client.perform(.createSession(context, mvpd: "acme-cable", domainName: "app.example", redirectURL: "https://app.example/done"))
        _ = try? await client.perform(.profiles(context))
        _ = try? await client.perform(.profile(context, mvpd: "acme-cable"))
        _ = try? await client.perform(.authorize(context, mvpd: "acme-cable", resource: "news-channel"))
        _ = try? await client.perform(.preauthorize(context, mvpd: "acme-cable", resources: ["news-channel"]))
        _ = try? await client.perform(.logout(context, mvpd: "acme-cable", redirectURL: "https://app.example/bye"))
        let sent = seen.withLock { $0 }
        for (operation, info) in sent where V2Request.requiringDeviceInfo.contains(operation) {
            expectEqual(info, .unknown(), "\(operation) carries the unknown device's description")
        }
        #expect(Set(sent.map(\.0)).isSuperset(of: V2Request.requiringDeviceInfo), "\(sent.map(\.0))")
        #expect(sent.first { $0.0 == "configuration" }?.1 == nil, "optional and unknown: not sent")

        let described = V2DeviceInfo(model: "AppleTV", version: "6", osName: "tvOS", osVersion: "18.1", connectionType: "WiFi")
        seen.withLock { $0.removeAll() }
        let second = V2Client(
            transport: recording, softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock,
            devices: { _ in V2Device(info: described, publicAddress: "203.0.113.9") })
        _ = try? await second.perform(.profiles(context))
        #expect(seen.withLock { $0.last?.1 } == described)
    }

    @Test func theClientRegistersOnceAndReusesItsAccessTokenUntilItExpires() async throws {
        let clock = ManualClock()
        let (client, _, counter) = Self.client(clock)
        let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-1")
        for _ in 0..<3 { _ = try await client.perform(.configuration(context)) }
        expectEqual(counter.counts, ["registerClient": 1, "accessToken": 1, "configuration": 3])
        await clock.advance(by: .seconds(21_600 - 60))  // within the refresh margin of the 6-hour token
        _ = try await client.perform(.configuration(context))
        expectEqual(counter.counts, ["registerClient": 1, "accessToken": 2, "configuration": 4], "refreshed before it expired, never registered again")
    }

    /// A token endpoint that hangs (and ignores cancellation) wedges nobody: each caller whose task is
    /// cancelled stops waiting at once, and once the shared fetch is older than its timeout the next
    /// caller abandons it and fetches again.
    @Test(.timeLimit(.minutes(10)))
    func aHungTokenFetchIsAbandonedAndItsCallersLeaveWhenCancelled() async throws {
        let clock = ManualClock()
        let counter = Counter()
        let service = SimulatedV2Service(simulator: Simulator(clock: clock), throttles: false)
        let hanging = HangingFirstToken(inner: CountingTransport(inner: service, counter: counter))
        let client = V2Client(
            transport: hanging, softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock,
            tokenFetchTimeout: .seconds(30))
        let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-1")
        for _ in 0..<2 {
            let caller = Task { try await client.perform(.configuration(context)) }
            while counter.counts["accessToken"] == nil { await Task.yield() }
            try await Task.sleep(for: .milliseconds(20))
            caller.cancel()
            await #expect(throws: BackendError.timeout) { _ = try await caller.value }
        }
        expectEqual(counter.counts["accessToken"], 1, "the second caller joined the one fetch")
        await clock.advance(by: .seconds(30))
        guard case .configuration = try await client.perform(.configuration(context)) else {
            Issue.record("not a configuration")
            return
        }
        expectEqual(counter.counts["accessToken"], 2, "the hung fetch was abandoned and fetched again")
        hanging.release()
    }

    @Test func anAccessTokenTheServiceNoLongerAcceptsIsReplacedOnce() async throws {
        let clock = ManualClock()
        let (client, service, counter) = Self.client(clock)
        let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-1")
        _ = try await client.perform(.configuration(context))
        service.registrar.invalidateAccessTokens()
        _ = try await client.perform(.configuration(context))
        expectEqual(counter.counts, ["registerClient": 1, "accessToken": 2, "configuration": 3], "one 401, one new token, the request again")
        // A service that keeps refusing: one retry, then a typed failure — no storm.
        service.registrar.refusesEveryAccessToken(true)
        await #expect(throws: BackendError.httpStatus(401, "invalid_access_token_client_application: The access token is missing, unknown or expired.")) {
            try await client.perform(.configuration(context))
        }
        expectEqual(counter.counts, ["registerClient": 1, "accessToken": 3, "configuration": 5])
    }

    @Test func storedCredentialsAreUsedAndNotRegisteredAgain() async throws {
        let clock = ManualClock()
        let store = InMemoryV2CredentialStore()
        let (first, service, _) = Self.client(clock, credentials: store)
        _ = try await first.perform(.configuration(RequestContext(requestorID: "sim-requestor", deviceID: "d")))
        let counter = Counter()
        let second = V2Client(
            transport: CountingTransport(inner: service, counter: counter), softwareStatement: SimulatedClientRegistrar.softwareStatement,
            credentials: store, baseURL: "https://sp.sim", clock: clock)
        _ = try await second.perform(.configuration(RequestContext(requestorID: "sim-requestor", deviceID: "d")))
        #expect(counter.counts["registerClient"] == nil && counter.counts["accessToken"] == 1)
    }

    /// A client the service deleted (`invalid_client` from the token endpoint) is replaced once: the
    /// software statement is registered again, the new credentials stored, and the request goes through.
    @Test func aDeletedClientIsRegisteredAgainOnceAndStored() async throws {
        let clock = ManualClock()
        let store = InMemoryV2CredentialStore()
        let (client, service, counter) = Self.client(clock, credentials: store)
        let context = RequestContext(requestorID: "sim-requestor", deviceID: "d")
        _ = try await client.perform(.configuration(context))
        let first = try #require(await store.load())
        service.registrar.deleteClients()
        _ = try await client.perform(.configuration(context))
        let second = try #require(await store.load())
        #expect(second.clientID != first.clientID, "the new client is stored")
        #expect(counter.counts["registerClient"] == 2 && service.registrar.clientCount == 1)
    }

    /// A token endpoint that refuses every client: one replacement, then a typed failure — no storm.
    @Test func aServiceThatRefusesEveryClientIsAFailureAfterOneReplacement() async throws {
        struct RefusingClients: V2Transport {
            let inner: any V2Transport
            func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
                if case .accessToken = request { return .oauthError("invalid_client") }
                return try await inner.send(request, context: context)
            }
        }
        let clock = ManualClock()
        let counter = Counter()
        let service = SimulatedV2Service(simulator: Simulator(clock: clock), throttles: false)
        let client = V2Client(
            transport: CountingTransport(inner: RefusingClients(inner: service), counter: counter),
            softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock)
        await #expect(throws: BackendError.httpStatus(400, "access token refused: invalid_client")) {
            try await client.perform(.configuration(RequestContext(requestorID: "sim-requestor", deviceID: "d")))
        }
        #expect(counter.counts["registerClient"] == 2 && counter.counts["accessToken"] == 2)
    }

    @Test func aRevokedSoftwareStatementIsATypedFailure() async throws {
        let clock = ManualClock()
        let (client, service, _) = Self.client(clock)
        service.registrar.revoke(softwareStatement: SimulatedClientRegistrar.softwareStatement)
        await #expect(throws: BackendError.httpStatus(400, "client registration refused: invalid_software_statement")) {
            try await client.perform(.configuration(RequestContext(requestorID: "sim-requestor", deviceID: "d")))
        }
    }

    @Test func relativeURLsAreResolvedAgainstTheBaseURL() async throws {
        struct Relative: V2Transport {
            func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
                switch request {
                case .registerClient: return V2Response(status: 201, body: V2ClientCredentials(clientID: "c", clientSecret: "s", issuedAtSeconds: 0).json)
                case .accessToken:
                    return V2Response(status: 200, body: V2AccessToken(id: "t", accessToken: "a", createdAt: Timestamp(milliseconds: 0), expiresInSeconds: 3600).json)
                default:
                    let session = V2Session(
                        actionName: .authenticate, actionType: .interactive, reasonType: .none, url: "/api/v2/authenticate/sp/ABC",
                        code: "ABC", sessionID: "s", serviceProvider: "sp")
                    return V2Response(status: 200, body: session.json)
                }
            }
        }
        let client = V2Client(transport: Relative(), softwareStatement: "x", baseURL: "https://api.example/", clock: ManualClock())
        let answer = try await client.perform(.createSession(RequestContext(requestorID: "sp", deviceID: "d"), mvpd: "m", domainName: "d", redirectURL: "a://b"))
        guard case .session(let session) = answer else {
            Issue.record("not a session: \(answer)")
            return
        }
        expectEqual(session.url, "https://api.example/api/v2/authenticate/sp/ABC")
    }

    @Test func anAnswerThatDoesNotDecodeIsMalformed() async throws {
        struct Garbled: V2Transport {
            func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
                switch request {
                case .registerClient: V2Response(status: 201, body: V2ClientCredentials(clientID: "c", clientSecret: "s", issuedAtSeconds: 0).json)
                case .accessToken:
                    V2Response(status: 200, body: V2AccessToken(id: "t", accessToken: "a", createdAt: Timestamp(milliseconds: 0), expiresInSeconds: 3600).json)
                default: V2Response(status: 200, body: ["decisions": "not a list"])
                }
            }
        }
        let client = V2Client(transport: Garbled(), softwareStatement: "x", baseURL: "https://api.example", clock: ManualClock())
        await #expect(throws: BackendError.self) {
            try await client.perform(.authorize(RequestContext(requestorID: "sp", deviceID: "d"), mvpd: "m", resource: "r"))
        }
    }
}

/// Counts the requests a transport sends, by operation.
final class Counter: Sendable {
    private let state = Mutex<[String: Int]>([:])
    var counts: [String: Int] { state.withLock { $0 } }
    func count(_ operation: String) { state.withLock { $0[operation, default: 0] += 1 } }
}

/// A transport that counts what it forwards.
struct CountingTransport: V2Transport {
    let inner: any V2Transport
    let counter: Counter
    func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
        counter.count(request.operation)
        return try await inner.send(request, context: context)
    }
}

/// A transport that shows `observe` each request and its context before forwarding it.
struct RecordingTransport: V2Transport {
    let inner: any V2Transport
    let observe: @Sendable (V2Request, V2RequestContext) -> Void
    func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
        observe(request, context)
        return try await inner.send(request, context: context)
    }
}

extension V2Request {
    /// The operations whose `X-Device-Info` the contract marks required.
    static let requiringDeviceInfo: Set<String> = [
        "registerClient", "accessToken", "createSession", "profiles", "profile", "authorize", "preauthorize", "logout",
    ]
}

/// A transport whose first access-token request hangs until released, whatever its caller does.
final class HangingFirstToken: V2Transport {
    let inner: any V2Transport
    private let state = Mutex<(hung: Bool, waiting: CheckedContinuation<Void, Never>?)>((false, nil))

    init(inner: any V2Transport) { self.inner = inner }

    func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
        let answer = try await inner.send(request, context: context)
        guard request.operation == "accessToken" else { return answer }
        let hang = state.withLock { state -> Bool in
            defer { state.hung = true }
            return !state.hung
        }
        if hang { await withCheckedContinuation { continuation in state.withLock { $0.waiting = continuation } } }
        return answer
    }

    func release() { state.withLock { $0.waiting }?.resume() }
}
