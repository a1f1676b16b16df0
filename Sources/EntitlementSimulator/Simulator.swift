import EntitlementEngine
import EntitlementSupport

/// An in-process Adobe Pass REST API V2 service plus the MVPDs behind it: it answers the engine's
/// backend port (`backend`) with V2's value types, and the web pages a user agent loads
/// (`load(_:)`).
///
/// Login: `POST sessions` issues a code (valid ``SimulatedWorld/sessionTTL``) and the URL
/// `{sp}/api/v2/authenticate/{requestor}/{code}`; that page sends the browser to the MVPD's login
/// page; a correct password leads back through the service provider, which saves a `regular`
/// profile for the device and sends the browser to the session's `redirectUrl` (nothing appended;
/// `error=` when the user cancels). The device then reads the profile by the code. A new session
/// for the device replaces its older ones.
///
/// The rest lives in its own files: profiles, single sign-on, TempPass, degraded access and the
/// platform's partner profile (`Simulator+Profiles`); decisions and media tokens
/// (`+Decisions`); logout (`+Logout`); the login pages and the second screen (`+Web`).
/// Refusals are REST API V2's enhanced errors with the status and `action` the reference lists.
public actor Simulator {
    // MARK: - Records

    /// A session: a login that may run until `notAfter`.
    struct Session {
        var requestorID: String
        var deviceID: String
        var mvpdID: String
        var domainName: String
        var redirectURL: String?
        var notAfter: Timestamp
        /// The session's tracking id (`sessionId`), carried by the profile its login saves.
        var sessionID: String
        /// Who logged in with it, once someone has.
        var username: String?

        var owner: SessionOwner { SessionOwner(requestorID: requestorID, deviceID: deviceID) }
    }

    /// A page flow on the MVPD's login page, for one session.
    struct LoginPage {
        var code: String
        var username: String?
        var assertion: String?
        var hopsLeft = 0
    }

    /// A profile the service holds for a device, requestor and MVPD.
    struct Profile {
        var username: String
        var kind: V2Profile.Kind
        var notBefore: Timestamp
        var notAfter: Timestamp
        /// The id of the session whose login saved it.
        var sessionID: String?
    }

    /// `device|requestor|mvpd`.
    static func profileKey(_ deviceID: String, _ requestorID: String, _ mvpdID: String) -> String {
        "\(deviceID)|\(requestorID)|\(mvpdID)"
    }

    // MARK: - State

    /// The world being simulated.
    public let world: SimulatedWorld
    let clock: any EngineClock
    let random: any RandomSource
    /// Sessions by code.
    var sessions: [String: Session] = [:]
    /// Whose a session is: a new one replaces the device's older ones for the requestor.
    struct SessionOwner: Hashable {
        var requestorID: String
        var deviceID: String
    }
    /// The sessions' codes by owner, and by when their time runs out (in the order they were made): a new
    /// session finds the device's older ones and the expired ones without looking at the others.
    var sessionCodes: [SessionOwner: Set<String>] = [:]
    var sessionExpiries: [(at: Timestamp, code: String, owner: SessionOwner)] = []
    var sessionExpiriesStart = 0
    /// How many sessions making room for new ones looked at, in all (a test's measure: a session's share
    /// stays flat however many are live).
    package private(set) var sessionsExamined = 0
    /// Login page flows by their id.
    var loginPages: [String: LoginPage] = [:]
    /// Profiles by ``profileKey(_:_:_:)``.
    var profiles: [String: Profile] = [:]
    /// The partner requests (`sessions/sso/{partner}`'s SAML requests) issued and not answered yet: for
    /// which device, and until when an answer is taken.
    var partnerRequests: [String: (deviceID: String, expires: Timestamp)] = [:]
    /// Interactive logouts waiting for the MVPD's logout page, by id: where they end.
    var logoutReturns: [String: String] = [:]
    /// When each TempPass window ends, by requestor, MVPD and device.
    var tempPasses: [String: Timestamp] = [:]
    /// The MVPDs' own sessions on each device (`device|mvpd` → user and end), opened by a login on
    /// the MVPD's page and closed by its logout page: what passive authentication relies on.
    var mvpdSessions: [String: (username: String, ends: Timestamp)] = [:]
    var faults: [BackendOperation: (fault: SimulatedFault, remaining: Int?)] = [:]
    /// How many injected faults the requests of each operation took (``faultsTaken(_:)``).
    var takenFaults: [BackendOperation: Int] = [:]
    var held: Set<BackendOperation> = []
    var waiting: [(operation: BackendOperation, resume: CheckedContinuation<Void, Never>)] = []
    /// Tasks waiting for held requests (``whenWaiting(_:count:)``).
    var watchers = Watchers<(operation: BackendOperation, count: Int)>()

    /// How many requests of each operation the backend has received.
    package internal(set) var requestCounts: [BackendOperation: Int] = [:]
    /// Every secret the simulator minted (codes, media tokens, assertions), so tests can prove none leaks:
    /// the newest 100,000 (up to half as many again before the oldest are let go).
    package internal(set) var issuedSecrets: [String] = []
    /// The same secrets, the newest ``MintedSecrets/limit`` of them, for what prints requests (the
    /// simulator server's access log) to shorten by value.
    package nonisolated let mintedSecrets = MintedSecrets()
    /// What each programmer's server was asked (``programmerAuthorization(serverID:form:)``).
    var programmerRequests: [(server: String, session: String, resource: String)] = []
    /// Faults of the programmer's servers (and of the Security API services), by id.
    var programmerFaults: [String: (fault: ProgrammerFault, untilHealed: Bool)] = [:]
    /// For each profile key, the session of the login an HBA policy denied (a new login passes it).
    var hbaDenied: [String: String] = [:]
    /// The transactions the programmer's servers asked a step-up for, in order: id, server, device,
    /// resource, approved, used.
    var transactions: [(id: String, server: String, device: String, resource: String, approved: Bool, used: Bool)] = []
    /// The user tokens the Security API services issued: by token, the provider, the subscriber and whether it is still valid.
    var subscriptionTokens: [String: (provider: String, subscriber: String, valid: Bool)] = [:]
    /// The subscribers as they are now (a script may let one lapse or renew).
    lazy var subscribers: [SimulatedWorld.Subscriber] = world.subscribers

    /// Creates a simulator of `world` on `clock`, minting secrets from `seed`.
    public init(world: SimulatedWorld = .default, clock: any EngineClock, seed: UInt64 = 7) {
        self.world = world
        self.clock = clock
        self.random = SeededRandomSource(seed: seed)
        self.chainProviders = world.chainProviders.filter { $0.kind == .simulated }.map(SimulatedEntitlementProvider.init)
    }

    /// The world's providers of a chain, as providers an engine can ask (shared by every engine).
    package nonisolated let chainProviders: [SimulatedEntitlementProvider]

    /// The world's provider chain for an engine, or nil when the world declares no provider beside the TV
    /// provider. `others` supplies the providers this module cannot build (a server-based one, by id).
    package nonisolated func providerChain(others: [String: any EntitlementProvider] = [:]) -> ProviderChain? {
        guard !world.chainProviders.isEmpty else { return nil }
        let order = world.chainOrder ?? world.chainProviders.map(\.id) + [ProviderLink.tvProviderID]
        let links: [ProviderChain.Link] = order.compactMap { id in
            if id == ProviderLink.tvProviderID { return .tvProvider }
            if let simulated = chainProviders.first(where: { $0.id == id }) { return .provider(simulated) }
            return others[id].map { .provider($0) }
        }
        return try? ProviderChain(links)
    }

    /// The backend port the engine talks to.
    package nonisolated var backend: SimulatedBackend { SimulatedBackend(simulator: self) }

    /// A browser that loads this simulator's pages.
    public nonisolated var userAgent: SimulatedUserAgent { SimulatedUserAgent(simulator: self) }

    // MARK: - Faults

    /// Makes the next `times` requests of `operation` fail with `fault` (nil: until ``heal(_:)``).
    public func inject(_ fault: SimulatedFault, into operation: BackendOperation, times: Int? = 1) {
        faults[operation] = (fault, times)
    }

    /// Removes the fault on `operation`.
    public func heal(_ operation: BackendOperation) { faults[operation] = nil }

    /// Whether the next request of `operation` times out (an injected timeout fault waits for it).
    package func timesOut(_ operation: BackendOperation) -> Bool {
        guard case .fail(let error) = faults[operation]?.fault else { return false }
        return error.code == .timeout
    }

    /// How many injected faults requests of `operation` have taken so far: a request that reached the
    /// simulator took the fault waiting for it, so a client that gave up on its own can wait for that.
    package func faultsTaken(_ operation: BackendOperation) -> Int { takenFaults[operation, default: 0] }

    // MARK: - Holding answers (deterministic interleavings)

    /// Makes requests of `operation` wait until ``release(_:)``: tests use it to let results
    /// arrive late (after a cancel, logout or reconfiguration) or to overlap requests.
    package func hold(_ operation: BackendOperation) { held.insert(operation) }

    /// Returns once `count` requests of `operation` are waiting (they were sent and are held), or when the
    /// calling task is cancelled.
    package func whenWaiting(_ operation: BackendOperation, count: Int = 1) async {
        guard waitingCount(operation) < count else { return }
        await watch(for: (operation, count))
    }

    /// How many requests of `operation` are waiting.
    package func waitingCount(_ operation: BackendOperation) -> Int { waiting.filter { $0.operation == operation }.count }

    /// Lets the oldest waiting request of `operation` proceed; false when none waits.
    @discardableResult
    package func release(_ operation: BackendOperation) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.operation == operation }) else { return false }
        waiting.remove(at: index).resume.resume()
        return true
    }

    /// Stops holding `operation` and lets every waiting request of it proceed, oldest first.
    package func releaseAll(_ operation: BackendOperation) {
        held.remove(operation)
        while release(operation) {}
    }

    func takeFault(_ operation: BackendOperation) -> SimulatedFault? {
        guard let (fault, remaining) = faults[operation] else { return nil }
        if let remaining {
            faults[operation] = remaining > 1 ? (fault, remaining - 1) : nil
        }
        takenFaults[operation, default: 0] += 1
        return fault
    }

    /// An opaque id that is no secret (a session's tracking id).
    func trackingID(_ prefix: String) -> String { prefix + Base64URL.encode(random.bytes(12)) }

    /// Notes a secret the simulator handed out (``issuedSecrets``, ``mintedSecrets``).
    func remember(_ secret: String) {
        issuedSecrets.append(secret)
        if issuedSecrets.count >= MintedSecrets.limit + MintedSecrets.limit / 2 {
            issuedSecrets.removeFirst(issuedSecrets.count - MintedSecrets.limit)
        }
        mintedSecrets.insert(secret)
    }

    func mint(_ prefix: String) -> String {
        let secret = prefix + Base64URL.encode(random.bytes(24))
        remember(secret)
        return secret
    }

    // MARK: - Backend port

    /// Why a request was not answered: the service refused it (an enhanced error, as V2 sends it),
    /// or the request failed on the way (an injected network failure, timeout, throttling…).
    enum Refusal: Error {
        case service(V2EnhancedError)
        case transport(BackendError)
    }

    /// Answers one backend request (after any hold and any injected fault).
    package func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        switch await respond(request) {
        case .success(let response): return response
        case .failure(.service(let error)): throw BackendError(v2: error, httpStatus: Int(clamping: error.status))
        case .failure(.transport(let error)): throw error
        }
    }

    /// The answer to `request`, counted, after any hold and any injected fault.
    func respond(_ request: BackendRequest) async -> Result<BackendResponse, Refusal> {
        requestCounts[request.operation, default: 0] += 1
        if held.contains(request.operation) {
            await withCheckedContinuation { continuation in
                waiting.append((request.operation, continuation))
                watchers.resume { $0.operation == request.operation && waitingCount($0.operation) >= $0.count }
            }
        }
        switch takeFault(request.operation) {
        case .fail(let error): return .failure(.transport(error))
        case .refuse(let error): return .failure(.service(error))
        case .refuseItems(let error):
            switch request {
            case .authorize(let context, let mvpd, let resource): return .success(.decisions([Self.itemError(error, context, mvpd, resource)]))
            case .preauthorize(let context, let mvpd, let resources):
                return .success(.decisions(resources.map { Self.itemError(error, context, mvpd, $0) }))
            default: return .failure(.service(error))
            }
        case .answerGarbage: return .success(request.operation == .logout ? .profiles([:]) : .logouts([:]))
        case .answerNoProfileYet: return .success(.profiles([:]))
        case .answerMissingParameters(let names):
            do throws(V2EnhancedError) {
                return .success(.session(try answerMissing(names, request)))
            } catch {
                return .failure(.service(error))
            }
        case nil: break
        }
        do throws(V2EnhancedError) {
            return .success(try answer(request))
        } catch {
            return .failure(.service(error))
        }
    }

    /// A decision refused with `error` on the item.
    static func itemError(_ error: V2EnhancedError, _ context: RequestContext, _ mvpd: String, _ resource: String) -> V2Decision {
        V2Decision(
            resource: resource, serviceProvider: context.requestorID, mvpd: mvpd, authorized: false, source: .mvpd, error: error)
    }

    /// The V2 answer to `request`, or its enhanced error.
    func answer(_ request: BackendRequest) throws(V2EnhancedError) -> BackendResponse {
        let context = request.context
        switch request {
        case .configuration: return .configuration(try configuration(context))
        case .createSession(_, let mvpd, let domainName?, let redirectURL):
            return .session(try createSession(context, mvpd: mvpd, domainName: domainName, redirectURL: redirectURL))
        case .createSession(_, let mvpd, nil, let redirectURL):
            // As the service does: a session without its domain waits for it (`resume`, missing parameters).
            return .session(try createIncompleteSession(context, mvpd: mvpd, domainName: nil, redirectURL: redirectURL))
        case .resumeSession(_, let code, let mvpd, let domainName, let redirectURL):
            return .session(
                try resumeSession(
                    requestorID: context.requestorID, code: code, mvpd: mvpd, domainName: domainName ?? "", redirectURL: redirectURL))
        case .session(_, let code): return .sessionStatus(try sessionStatus(requestorID: context.requestorID, code: code))
        case .partnerSession(_, let partner, let domainName, let redirectURL):
            return .session(try partnerSession(context, partner: partner, domainName: domainName ?? "", redirectURL: redirectURL))
        case .profiles: return .profiles(try allProfiles(context))
        case .profile(_, let mvpd): return .profiles(try profile(context, mvpd: mvpd))
        case .profileByCode(_, let code): return .profiles(try profile(context, code: code))
        case .partnerProfile(_, _, let assertion): return .profiles(try partnerProfile(context, assertion))
        case .authorize(_, let mvpd, let resource): return .decisions(try authorize(context, mvpd: mvpd, resources: [resource]))
        case .preauthorize(_, let mvpd, let resources): return .decisions(try preauthorize(context, mvpd: mvpd, resources))
        case .logout(_, let mvpd, let redirectURL): return .logouts(try logout(context, mvpd: mvpd, redirectURL: redirectURL))
        }
    }

    /// An enhanced error as REST API V2 sends it.
    static func refusal(
        _ status: Int64, _ code: String, _ message: String, _ action: V2EnhancedError.Action = .none, details: String? = nil
    ) -> V2EnhancedError {
        V2EnhancedError(status: status, code: code, message: message, details: details, action: action)
    }

    /// The requestor, or `invalid_parameter_service_provider`.
    func requestor(_ context: RequestContext) throws(V2EnhancedError) -> SimulatedWorld.Requestor {
        guard let requestor = world.requestor(context.requestorID) else {
            throw Self.refusal(400, "invalid_parameter_service_provider", "The service provider '\(context.requestorID.prefix(64))' is not known.")
        }
        return requestor
    }

    /// The requestor's MVPD, or `invalid_parameter_mvpd`.
    func provider(_ context: RequestContext, _ mvpdID: String) throws(V2EnhancedError) -> SimulatedWorld.Provider {
        guard try requestor(context).mvpdIDs.contains(mvpdID), let provider = world.provider(mvpdID) else {
            throw Self.refusal(400, "invalid_parameter_mvpd", "The MVPD '\(mvpdID.prefix(64))' is not integrated with this service provider.")
        }
        return provider
    }

    func configuration(_ context: RequestContext) throws(V2EnhancedError) -> V2Configuration {
        let requestor = try requestor(context)
        let mvpds = requestor.mvpdIDs.compactMap { world.provider($0) }.map { provider in
            V2Configuration.MVPD(
                id: provider.id, displayName: provider.displayName, logoURL: provider.mvpd.logoURL, isTempPass: provider.tempPass,
                authPerAggregator: provider.perRequestor, enablePlatformServices: provider.platformSSO,
                displayInPlatformPicker: provider.platformSSO)
        }
        return V2Configuration(requestorID: requestor.id, requestorName: requestor.id, mvpds: mvpds)
    }

    // MARK: - Sessions

    /// Whether `text` is a URL the simulator can send a browser back to: it has a scheme, and nothing a
    /// `Location` header cannot carry (white space, control characters — an encoded CR LF would let
    /// the requester write headers of its own into the answer that ends the login).
    static func isRedirectURL(_ text: String) -> Bool {
        text.utf8.contains(UInt8(ascii: ":")) && text.unicodeScalars.allSatisfy { $0.value > 0x20 && !(0x7F...0x9F).contains($0.value) }
    }

    /// `POST sessions`: a code and login URL (`authenticate`), or `resume` when the redirect URL is
    /// missing (a second screen supplies it), or `authorize` when no login is needed (TempPass,
    /// degraded access). A new session replaces the device's older ones for the requestor.
    func createSession(_ context: RequestContext, mvpd: String, domainName: String, redirectURL: String?)
        throws(V2EnhancedError) -> V2Session
    {
        let provider = try provider(context, mvpd)
        let now = clock.now()
        if provider.tempPass || provider.degraded {
            if provider.tempPass { _ = try tempPassWindow(context, provider) }
            return V2Session(
                actionName: .authorize, actionType: .direct, reasonType: provider.tempPass ? .temporary : .degraded,
                url: "\(world.serviceProvider)/api/v2/\(context.requestorID)/decisions/authorize/\(mvpd)",
                sessionID: trackingID("sid."), mvpd: mvpd, serviceProvider: context.requestorID)
        }
        if let redirectURL, !Self.isRedirectURL(redirectURL) {
            throw Self.refusal(400, "invalid_parameter_redirect_url", "The redirect URL is not a URL.")
        }
        forgetSessions(replacedFor: context)
        let code = sessionCode()
        let notAfter = now.adding(world.sessionTTL)
        let sessionID = trackingID("sid.")
        keep(
            Session(
                requestorID: context.requestorID, deviceID: context.deviceID, mvpdID: mvpd, domainName: domainName,
                redirectURL: redirectURL, notAfter: notAfter, sessionID: sessionID), code: code)
        guard redirectURL != nil else {
            return V2Session(
                actionName: .resume, actionType: .direct, reasonType: .none, missingParameters: ["redirectUrl"],
                url: "\(world.serviceProvider)/api/v2/\(context.requestorID)/sessions/\(code)", code: code,
                sessionID: sessionID, mvpd: mvpd, serviceProvider: context.requestorID, notBefore: now, notAfter: notAfter)
        }
        return V2Session(
            actionName: .authenticate, actionType: .interactive, reasonType: .none, url: authenticateURL(context.requestorID, code),
            code: code, sessionID: sessionID, mvpd: mvpd, serviceProvider: context.requestorID, notBefore: now,
            notAfter: notAfter)
    }

    /// How many authentication sessions the simulator holds (expired ones are dropped when a session is created).
    package var sessionCount: Int { sessions.count }

    /// Drops the device's earlier sessions for the requestor (a new code replaces them) and every
    /// session that has expired, so a long-running server holds only live sessions — looking at those
    /// alone, not at every live session. (Sessions are pruned by expiry in the order they were made: a
    /// clock set back leaves some past their time until those made before them expire; none is used
    /// past its time.)
    func forgetSessions(replacedFor context: RequestContext) {
        let now = clock.now()
        let owner = SessionOwner(requestorID: context.requestorID, deviceID: context.deviceID)
        for code in sessionCodes.removeValue(forKey: owner) ?? [] {
            sessionsExamined += 1
            if let session = sessions[code], session.owner == owner { sessions[code] = nil }
        }
        while sessionExpiriesStart < sessionExpiries.count, sessionExpiries[sessionExpiriesStart].at <= now {
            let (_, code, owner) = sessionExpiries[sessionExpiriesStart]
            sessionExpiriesStart += 1
            sessionsExamined += 1
            if let session = sessions[code], session.owner == owner {
                guard session.notAfter <= now else { continue }
                sessions[code] = nil
            }
            // Its code goes from its owner's too (a session ended otherwise, a resumed TempPass, left it there).
            sessionCodes[owner]?.remove(code)
            if sessionCodes[owner]?.isEmpty == true { sessionCodes[owner] = nil }
        }
        if sessionExpiriesStart > 1024, sessionExpiriesStart * 2 > sessionExpiries.count {
            sessionExpiries.removeFirst(sessionExpiriesStart)
            sessionExpiriesStart = 0
        }
    }

    /// Keeps a new session under `code`, indexed by its owner and its expiry.
    func keep(_ session: Session, code: String) {
        sessions[code] = session
        sessionCodes[session.owner, default: []].insert(code)
        sessionExpiries.append((session.notAfter, code, session.owner))
    }

    /// The page that starts a session's login in a browser.
    func authenticateURL(_ requestorID: String, _ code: String) -> String {
        "\(world.serviceProvider)/api/v2/authenticate/\(requestorID)/\(code)"
    }

    /// A session code: 8 characters without look-alikes (the second screen's registration code too).
    func sessionCode() -> String {
        let alphabet = Array("ABCDEFGHJKLMNPQRSTUVWXYZ23456789")
        let code = String(random.bytes(8).map { alphabet[Int($0) % alphabet.count] })
        remember(code)
        return code
    }

    /// The session with `code` for this device's requestor, unexpired, or `invalid_authentication_session`.
    func session(_ code: String, requestorID: String) throws(V2EnhancedError) -> Session {
        guard let session = sessions[code], session.requestorID == requestorID, clock.now() < session.notAfter else {
            throw Self.refusal(400, "invalid_authentication_session", "The authentication session is unknown or expired.")
        }
        return session
    }
}

/// The simulator as the engine's backend port.
package struct SimulatedBackend: EntitlementBackend {
    /// The simulator answering.
    package let simulator: Simulator

    /// Forwards `request` to the simulator.
    package func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        try await simulator.perform(request)
    }
}

extension Simulator: Watching {}
