import Synchronization

/// The transport REST API V2 travels on: one request with its headers in, the HTTP status and the
/// JSON body out. A network failure or a deadline is a thrown ``BackendError``; every HTTP answer,
/// error statuses included, is a ``V2Response``.
package protocol V2Transport: Sendable {
    /// Sends `request` with the headers `context` describes.
    func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response
}

/// Where the client credentials of a software statement are kept — for ever: registering again
/// makes a new client, and the users' profiles belong to the old one (Adobe's *REST API V2 Checklist*).
public protocol V2CredentialStore: Sendable {
    /// The stored credentials, if any.
    func load() async -> V2ClientCredentials?
    /// Keeps `credentials`.
    func save(_ credentials: V2ClientCredentials) async
    /// The stored credentials — unless they are `rejected` (the service answered `invalid_client` to
    /// them) or there are none: then `register` makes new ones, which are stored and returned. A store
    /// shared by several processes registers once for all of them (the others wait and read what it
    /// stored); the default, for a store of one process, registers whenever it has none.
    func credentials(
        replacing rejected: V2ClientCredentials?, registering register: @Sendable () async throws(BackendError) -> V2ClientCredentials
    ) async throws(BackendError) -> V2ClientCredentials
}

extension V2CredentialStore {
    /// The stored credentials unless they are `rejected` or missing; else registers, stores and returns new ones.
    public func credentials(
        replacing rejected: V2ClientCredentials?, registering register: @Sendable () async throws(BackendError) -> V2ClientCredentials
    ) async throws(BackendError) -> V2ClientCredentials {
        if let stored = await load(), stored != rejected { return stored }
        let registered = try await register()
        await save(registered)
        return registered
    }
}

/// Client credentials in memory (tests, or a process that registers at every start).
public final class InMemoryV2CredentialStore: V2CredentialStore {
    private let stored = Mutex<V2ClientCredentials?>(nil)

    /// An empty store.
    public init() {}

    /// The stored credentials, if any.
    public func load() async -> V2ClientCredentials? { stored.withLock { $0 } }

    /// Keeps `credentials`.
    public func save(_ credentials: V2ClientCredentials) async { stored.withLock { $0 = credentials } }
}

/// Adobe Pass REST API V2 for every engine of a process: the ``EntitlementService`` an `AccessEnabler` or
/// `SessionHost` is given. Each of the engine's requests goes out as its V2 request on the client's
/// transport (`HTTPV2Transport`, EntitlementHTTP; in tests the simulator's, `V2Client.simulated(_:)`)
/// and its answer is decoded strictly.
///
/// - **Registration and access tokens** (Adobe's *Retrieve client credentials* and *Retrieve access
///   token*): the software statement is registered once
///   and the credentials kept in the ``V2CredentialStore``; the access token is cached until
///   `refreshMargin` before it expires, fetched by one request however many arrive at once, and
///   fetched again once when the service answers 401 — a second 401 is the request's failure, never a
///   storm of registrations. When the token endpoint answers `invalid_client` (the client was deleted,
///   or its secret no longer holds), the stored credentials are replaced once through the store (a
///   store a fleet shares registers once for all its nodes) and the token asked for again.
/// - **Headers**: `Authorization: Bearer` on every `/api/v2` request; the device's id, description
///   (`X-Device-Info`), public address (`X-Forwarded-For`: throttling is per address), visitor id and
///   TempPass identity from `devices`, each only on the endpoints that document it
///   (the *REST API V2* article lists which).
/// - **Answers**: 200/201 bodies decode strictly (a body that does not decode is
///   ``BackendError/malformedResponse(_:)``); an error body is read by its `action`; HTTP 429 is ``BackendError/throttled(retryAfterSeconds:)``.
///   Relative URLs in answers (`/api/v2/authenticate/…`) are resolved against `baseURL`.
public actor V2Client: EntitlementBackend {
    /// The transport.
    package let transport: any V2Transport
    /// The software statement registered when no credentials are stored.
    package let softwareStatement: String
    /// Where client credentials are kept.
    package let credentials: any V2CredentialStore
    /// The service's base URL, for relative URLs in answers (Adobe's: ``AdobePassHost``).
    package let baseURL: String
    /// How long before its expiry an access token is replaced.
    package let refreshMargin: Duration
    /// What the embedding backend knows of each device, by device id (its headers).
    package let devices: @Sendable (String) -> V2Device
    private let clock: any EngineClock
    /// How long the one access-token fetch every caller shares may take before the next caller
    /// abandons it and fetches again (a token endpoint that hangs wedges nobody for longer).
    package let tokenFetchTimeout: Duration
    private var accessToken: V2AccessToken?
    private var tokenRequest: (task: Task<Result<V2AccessToken, BackendError>, Never>, started: Timestamp, number: UInt64)?
    private var tokenRequests: UInt64 = 0

    /// A client on `transport` registering `softwareStatement`.
    package init(
        transport: any V2Transport, softwareStatement: String, credentials: any V2CredentialStore = InMemoryV2CredentialStore(),
        baseURL: String, clock: any EngineClock, refreshMargin: Duration = .seconds(60),
        devices: @escaping @Sendable (String) -> V2Device = { _ in V2Device() }, tokenFetchTimeout: Duration = .seconds(30)
    ) {
        self.tokenFetchTimeout = max(tokenFetchTimeout, .seconds(1))
        self.transport = transport
        self.softwareStatement = softwareStatement
        self.credentials = credentials
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.clock = clock
        self.refreshMargin = refreshMargin
        self.devices = devices
    }

    // MARK: - The port

    /// This client itself.
    public nonisolated var port: BackendPort { BackendPort(self) }

    /// Sends `request` (with a fresh access token once if the service refuses the cached one).
    package func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        var bearer = try await validAccessToken()
        var answer = try await send(request, bearer: bearer)
        if answer.status == 401 {
            accessToken = nil
            bearer = try await validAccessToken()
            answer = try await send(request, bearer: bearer)
        }
        return try decode(answer, for: request)
    }

    private func send(_ request: BackendRequest, bearer: String) async throws(BackendError) -> V2Response {
        let v2 = request.v2
        let id = request.context.deviceID
        let device = devices(id)
        let context = V2RequestContext(
            bearer: bearer, deviceID: v2.deviceIdentifier == .notSent ? nil : id, forwardedFor: device.publicAddress,
            deviceInfo: Self.deviceInfo(for: v2, device.info, publicAddress: device.publicAddress), visitorID: device.visitorID,
            tempPassIdentity: v2.acceptsTempPassIdentity ? device.tempPassIdentity : nil)
        return try await transport.send(v2, context: context)
    }

    /// The `X-Device-Info` `request` carries: the device's own description; where the header is required
    /// and the backend gave none, an honest "unknown" one; nothing where it is optional and unknown, or not sent.
    static func deviceInfo(for request: V2Request, _ info: V2DeviceInfo?, publicAddress: String?) -> V2DeviceInfo? {
        switch request.deviceInfo {
        case .notSent: nil
        case .optional: info
        case .required: info ?? .unknown(publicAddress: publicAddress)
        }
    }

    // MARK: - Access tokens

    /// The cached access token, or a new one (one request for every caller waiting at once). A caller
    /// whose task is cancelled stops waiting at once (``BackendError/timeout``); a fetch running longer
    /// than ``tokenFetchTimeout`` is cancelled by the next caller, which fetches again.
    private func validAccessToken() async throws(BackendError) -> String {
        let now = clock.now()
        if let token = accessToken, Saturating.subtract(token.expires.milliseconds, refreshMargin.milliseconds) > now.milliseconds {
            return token.accessToken
        }
        let running: Task<Result<V2AccessToken, BackendError>, Never>
        if let tokenRequest, now < tokenRequest.started.adding(tokenFetchTimeout) {
            running = tokenRequest.task
        } else {
            tokenRequest?.task.cancel()
            tokenRequests += 1
            let number = tokenRequests
            running = Task {
                let result = await self.fetchAccessToken()
                self.tokenFetchEnded(number, result)
                return result
            }
            tokenRequest = (running, now, number)
        }
        return try await Self.value(of: running, unlessCancelled: .failure(.timeout)).get().accessToken
    }

    /// A fetch ended: its token is cached, and the next caller fetches anew (unless a later fetch replaced it).
    private func tokenFetchEnded(_ number: UInt64, _ result: Result<V2AccessToken, BackendError>) {
        guard tokenRequest?.number == number else { return }
        tokenRequest = nil
        if case .success(let token) = result { accessToken = token }
    }

    /// `task`'s value, or `cancelled` as soon as the calling task is cancelled (the task goes on for others).
    private static func value<Value: Sendable>(of task: Task<Value, Never>, unlessCancelled cancelled: Value) async -> Value {
        let first = FirstResult<Value>()
        let waiter = Task { first.offer(await task.value) }
        let value = await first.value(orIfCancelled: cancelled)
        waiter.cancel()
        return value
    }

    /// An access token for the stored client credentials. When the service answers `invalid_client`
    /// (the client was deleted, or its secret no longer holds) the credentials are replaced once through
    /// the store — a fleet sharing it registers once — and the token asked for again; a second refusal
    /// is the request's failure, never a storm of registrations.
    private func fetchAccessToken() async -> Result<V2AccessToken, BackendError> {
        do throws(BackendError) {
            var client = try await credentials.credentials(replacing: nil, registering: register)
            var answer = try await requestAccessToken(client)
            if Self.saysInvalidClient(answer) {
                client = try await credentials.credentials(replacing: client, registering: register)
                answer = try await requestAccessToken(client)
            }
            guard answer.status == 200 || answer.status == 201, let body = answer.body else {
                throw Self.failure(answer, what: "access token")
            }
            do throws(V2DecodingError) {
                return .success(try V2AccessToken(json: body))
            } catch {
                throw BackendError.malformedResponse("access token: \(error)")
            }
        } catch {
            return .failure(error)
        }
    }

    private func requestAccessToken(_ client: V2ClientCredentials) async throws(BackendError) -> V2Response {
        try await transport.send(
            .accessToken(clientID: client.clientID, clientSecret: client.clientSecret), context: V2RequestContext(deviceInfo: .unknown()))
    }

    /// Whether the token endpoint refused the client itself (OAuth's `invalid_client`).
    static func saysInvalidClient(_ answer: V2Response) -> Bool {
        (400...403).contains(answer.status) && answer.body?["error"]?.string == "invalid_client"
    }

    /// Registers the software statement: new client credentials (not stored here: the store does that).
    private nonisolated var register: @Sendable () async throws(BackendError) -> V2ClientCredentials {
        { [transport, softwareStatement] () async throws(BackendError) -> V2ClientCredentials in
            try await Self.register(softwareStatement, on: transport)
        }
    }

    /// Registers `softwareStatement` on `transport` (Adobe's *Retrieve client credentials*).
    package static func register(_ softwareStatement: String, on transport: any V2Transport) async throws(BackendError)
        -> V2ClientCredentials
    {
        let answer = try await transport.send(
            .registerClient(softwareStatement: softwareStatement, redirectURI: nil), context: V2RequestContext(deviceInfo: .unknown()))
        guard answer.status == 200 || answer.status == 201, let body = answer.body else {
            throw Self.failure(answer, what: "client registration")
        }
        do throws(V2DecodingError) {
            return try V2ClientCredentials(json: body)
        } catch {
            throw BackendError.malformedResponse("client registration: \(error)")
        }
    }

    /// A registration or token failure: the OAuth `error` when there is one, else the status.
    private static func failure(_ answer: V2Response, what: String) -> BackendError {
        if answer.status == 429 { return BackendError(v2HTTPStatus: 429) }
        let code = answer.body?["error"]?.string ?? "HTTP \(answer.status)"
        return .httpStatus(answer.status, "\(what) refused: \(code.prefix(64))")
    }

    // MARK: - Answers

    private func decode(_ answer: V2Response, for request: BackendRequest) throws(BackendError) -> BackendResponse {
        guard answer.status == 200 || answer.status == 201 else {
            if answer.status != 429, let body = answer.body, let error = try? V2EnhancedError(json: body) {
                throw BackendError(v2: error, httpStatus: answer.status)
            }
            throw BackendError(v2HTTPStatus: answer.status)
        }
        guard let body = answer.body else {
            throw .malformedResponse("\(request.operation.rawValue): \(answer.bodyProblem ?? "no body")")
        }
        do throws(V2DecodingError) {
            switch request {
            case .configuration: return .configuration(try V2Configuration(json: body))
            case .createSession, .resumeSession, .partnerSession:
                var session = try V2Session(json: body)
                session.url = session.url.map(absolute)
                return .session(session)
            case .session: return .sessionStatus(try V2SessionStatus(json: body))
            case .profiles, .profile, .profileByCode, .partnerProfile: return .profiles(try V2Profile.profiles(json: body))
            case .authorize, .preauthorize: return .decisions(try V2Decision.decisions(json: body))
            case .logout:
                return .logouts(
                    try V2Logout.logouts(json: body).mapValues { logout in
                        var logout = logout
                        logout.url = logout.url.map(absolute)
                        return logout
                    })
            }
        } catch {
            throw .malformedResponse("\(request.operation.rawValue): \(error)")
        }
    }

    /// `url` resolved against `baseURL` when it is a path.
    private func absolute(_ url: String) -> String { url.hasPrefix("/") ? baseURL + url : url }
}
