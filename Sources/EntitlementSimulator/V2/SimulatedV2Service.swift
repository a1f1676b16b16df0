import EntitlementEngine
import Synchronization

/// The simulator as an Adobe Pass REST API V2 service on the wire: `V2Request`s with their headers
/// in, `V2Response`s (an HTTP status and V2's JSON) out — the `V2Transport` an engine's
/// `V2Client` talks to in process, and what `entitle serve` will put on a socket.
///
/// In front of the ``Simulator``'s answers: client registration and access tokens
/// (``SimulatedClientRegistrar``), the bearer check on every `/api/v2` request (401), and
/// throttling per device (a burst of 10, then 1 request/s, HTTP 429 with no JSON; keyed by
/// `X-Forwarded-For`, else the device id), which ``throttles`` can turn off for test libraries
/// that do not pace their requests. The simulator's faults and held answers apply as on the port;
/// a refusal is the enhanced error's JSON with its status; an injected bare HTTP status or
/// throttling is that status with no JSON; an injected network failure or timeout is thrown, as a
/// transport would (no HTTP answer at all).
package final class SimulatedV2Service: V2Transport {
    /// The simulator answering.
    package let simulator: Simulator
    /// Client registration and access tokens.
    package let registrar: SimulatedClientRegistrar
    /// Whether requests are throttled per device.
    package let throttles: Bool
    private let clock: any EngineClock
    private let buckets = Mutex<[String: V2ThrottleBucket]>([:])

    /// The service of `simulator` (its world and clock), minting credentials from `seed`.
    package init(simulator: Simulator, seed: UInt64 = 11, throttles: Bool = true) {
        self.simulator = simulator
        self.clock = simulator.clock
        self.throttles = throttles
        self.registrar = SimulatedClientRegistrar(clock: simulator.clock, random: SeededRandomSource(seed: seed))
    }

    /// The answer to `request` sent with `context`.
    package func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
        guard !throttles || takeToken(context) else { return .throttled }
        if let registration = registrar.answer(request) { return registration }
        if let refusal = registrar.refusal(bearer: context.bearer) { return refusal }
        if let answer = await beyondThePort(request, context) { return answer }
        guard let port = BackendRequest(request, deviceID: context.deviceID ?? "") else {
            return .error(
                V2EnhancedError(
                    status: 400, code: "invalid_parameter_mvpd", message: "The request lacks a parameter the simulator needs.",
                    action: .none))
        }
        switch await simulator.respond(port) {
        case .success(let response): return V2Response(status: request.operation == "partnerProfile" ? 201 : 200, body: response.json)
        case .failure(.service(let error)): return .error(error)
        case .failure(.transport(let error)) where error.code == .throttled: return .throttled
        case .failure(.transport(let error)) where error.code == .httpStatus: return V2Response(status: error.status ?? 500, body: nil)
        case .failure(.transport(let error)): throw error
        }
    }

    /// Whether `request` sent with `context` will time out: an injected timeout fault waits for its
    /// operation (the service then holds the answer until the client gives up).
    package func timesOut(_ request: V2Request, context: V2RequestContext) async -> Bool {
        guard let port = BackendRequest(request, deviceID: context.deviceID ?? "") else { return false }
        return await simulator.timesOut(port.operation)
    }

    /// How many injected faults requests of `request`'s operation have taken (``Simulator/faultsTaken(_:)``);
    /// nil for a request the simulator's port does not carry.
    package func faultsTaken(_ request: V2Request, context: V2RequestContext) async -> Int? {
        guard let port = BackendRequest(request, deviceID: context.deviceID ?? "") else { return nil }
        return await simulator.faultsTaken(port.operation)
    }

    /// The answer to an operation the engine's port does not carry (see ``Simulator``'s session
    /// operations); nil for the others.
    private func beyondThePort(_ request: V2Request, _ context: V2RequestContext) async -> V2Response? {
        func port(_ serviceProvider: String) -> RequestContext { RequestContext(requestorID: serviceProvider, deviceID: context.deviceID ?? "") }
        do throws(V2EnhancedError) {
            switch request {
            case .createSession(let sp, nil, let domainName, let redirectURL):
                let session = try await simulator.createIncompleteSession(port(sp), mvpd: nil, domainName: domainName, redirectURL: redirectURL)
                return V2Response(status: 200, body: session.json)
            case .resumeSession(let sp, let code, let mvpd, let domainName, let redirectURL) where mvpd == nil:
                // The second-screen app resumes a session whose MVPD it does not name (the device chose it).
                let session = try await simulator.resumeSession(requestorID: sp, code: code, mvpd: mvpd, domainName: domainName, redirectURL: redirectURL)
                return V2Response(status: 200, body: session.json)
            case .authorize(let sp, let mvpd, let resources) where resources.count > 1:
                let decisions = try await simulator.authorize(port(sp), mvpd: mvpd, resourcesAtOnce: resources)
                return V2Response(status: 200, body: V2Decision.json(decisions: decisions))
            default:
                return nil
            }
        } catch {
            return .error(error)
        }
    }

    /// Throttling per device: one bucket per `X-Forwarded-For` (or device id; requests with neither share one).
    private func takeToken(_ context: V2RequestContext) -> Bool {
        let key = context.forwardedFor ?? context.deviceID ?? ""
        let now = clock.now()
        return buckets.withLock { buckets in buckets[key, default: V2ThrottleBucket()].take(at: now) }
    }
}

extension BackendRequest {
    /// The port's request for a V2 request the simulator serves (nil: registration, which the registrar
    /// answers, and what the simulator answers beyond the port: a session created without an MVPD, a resume
    /// that names none, decisions for several resources).
    init?(_ request: V2Request, deviceID: String) {
        func context(_ serviceProvider: String) -> RequestContext { RequestContext(requestorID: serviceProvider, deviceID: deviceID) }
        switch request {
        case .configuration(let sp): self = .configuration(context(sp))
        case .createSession(let sp, let mvpd?, let domainName, let redirectURL):
            self = .createSession(context(sp), mvpd: mvpd, domainName: domainName ?? "", redirectURL: redirectURL)
        case .profiles(let sp): self = .profiles(context(sp))
        case .profile(let sp, let mvpd): self = .profile(context(sp), mvpd: mvpd)
        case .profileByCode(let sp, let code): self = .profileByCode(context(sp), code: code)
        case .partnerProfile(let sp, let partner, let samlResponse):
            self = .partnerProfile(context(sp), partner: partner, assertion: PlatformAssertion(mvpdID: "", serialized: samlResponse))
        case .authorize(let sp, let mvpd, let resources) where resources.count == 1:
            self = .authorize(context(sp), mvpd: mvpd, resource: resources[0])
        case .preauthorize(let sp, let mvpd, let resources): self = .preauthorize(context(sp), mvpd: mvpd, resources: resources)
        case .logout(let sp, let mvpd, let redirectURL): self = .logout(context(sp), mvpd: mvpd, redirectURL: redirectURL)
        case .resumeSession(let sp, let code, let mvpd?, let domainName, let redirectURL):
            self = .resumeSession(context(sp), code: code, mvpd: mvpd, domainName: domainName ?? "", redirectURL: redirectURL)
        case .session(let sp, let code): self = .session(context(sp), code: code)
        case .partnerSession(let sp, let partner, let domainName, let redirectURL):
            self = .partnerSession(context(sp), partner: partner, domainName: domainName, redirectURL: redirectURL)
        case .createSession, .authorize, .registerClient, .accessToken, .resumeSession: return nil
        }
    }
}

extension BackendResponse {
    /// The answer's body as REST API V2 sends it.
    var json: JSONValue {
        switch self {
        case .configuration(let configuration): configuration.json
        case .session(let session): session.json
        case .sessionStatus(let status): status.json
        case .profiles(let profiles): V2Profile.json(profiles: profiles)
        case .decisions(let decisions): V2Decision.json(decisions: decisions)
        case .logouts(let logouts): V2Logout.json(logouts: logouts)
        }
    }
}

extension V2Client {
    /// A REST API V2 client of `simulator`, in process: every request and answer goes through V2's
    /// JSON, client registration and access tokens included, with no socket (`SimulatedV2Service`,
    /// unthrottled). What a test gives `AccessEnabler(backend:)` or `SessionHost(backend:)`.
    public static func simulated(_ simulator: Simulator) -> V2Client {
        V2Client(
            transport: SimulatedV2Service(simulator: simulator, throttles: false), softwareStatement: SimulatedClientRegistrar.softwareStatement,
            baseURL: simulator.world.serviceProvider, clock: simulator.clock)
    }
}
