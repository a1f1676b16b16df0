import EntitlementEngine

/// An in-process programmer backend plus the MVPDs behind it: it answers the engine's backend
/// port (``backend``) and the web pages the user agent loads (``load(_:)``).
///
/// Login: the service provider's authenticate URL checks its parameters and sends the browser to
/// the MVPD's login page; a correct password leads back through the service provider, which mints
/// a one-time `code` (10 minutes, single use) and redirects to the app's redirect URL with `code`,
/// `state` and `mvpd`. The code exchange checks PKCE S256, the redirect URL, requestor, device and
/// MVPD. Logout revokes the device's tokens and runs the MVPD's logout chain back to the app.
///
/// The other ways in live in their own files: platform assertions (`Simulator+PlatformSSO`),
/// TempPass (`+TempPass`), single sign-on and passive authentication (`+SingleSignOn`) and the
/// second screen (`+SecondScreen`).
public actor Simulator {
    // MARK: - Records

    struct LoginSession {
        var requestorID: String
        var mvpdID: String
        var deviceID: String
        var redirectURI: String
        var state: String
        var codeChallenge: String
        var username: String?
        var assertion: String?
        var hopsLeft = 0
        /// Set for a second-screen login: the registration code it activates.
        var registrationCode: String?
    }

    struct Registration {
        var requestorID: String
        var mvpdID: String
        var deviceID: String
        var expires: Timestamp
        /// Who signed in with the code on a second screen, once someone has.
        var username: String?
    }

    struct IssuedCode {
        var session: LoginSession
        var username: String
        var expires: Timestamp
        var used = false
        var tokenIssued: String?
    }

    struct IssuedAuthentication {
        var token: AuthenticationToken
        var username: String
        var deviceID: String
        var revoked = false
        /// The pseudo-subscriber of a TempPass: entitled to every resource of its requestor.
        var tempPassUser: SimulatedWorld.User?
    }

    struct IssuedAuthorization {
        var token: AuthorizationToken
        var authentication: String
    }

    struct LogoutSession {
        var redirectURI: String
        var state: String
    }

    // MARK: - State

    /// The world being simulated.
    public let world: SimulatedWorld
    let clock: any EngineClock
    let random: any RandomSource
    var loginSessions: [String: LoginSession] = [:]
    var codes: [String: IssuedCode] = [:]
    var authentications: [String: IssuedAuthentication] = [:]
    var authorizations: [String: IssuedAuthorization] = [:]
    var logoutSessions: [String: LogoutSession] = [:]
    /// When each TempPass window ends, by requestor, MVPD and device.
    var tempPasses: [String: Timestamp] = [:]
    /// The MVPDs' own sessions on each device (`device|mvpd` → user and end), opened by a login on
    /// the MVPD's page and closed by its logout page: what passive authentication relies on.
    var mvpdSessions: [String: (username: String, ends: Timestamp)] = [:]
    /// Registration codes for second-screen logins (cookbook E).
    var registrations: [String: Registration] = [:]
    var faults: [BackendOperation: (fault: SimulatedFault, remaining: Int?)] = [:]
    var held: Set<BackendOperation> = []
    var waiting: [(operation: BackendOperation, resume: CheckedContinuation<Void, Never>)] = []
    var watchers: [(operation: BackendOperation, count: Int, resume: CheckedContinuation<Void, Never>)] = []

    /// How many requests of each operation the backend has received.
    public internal(set) var requestCounts: [BackendOperation: Int] = [:]
    /// Every secret the simulator minted (codes, tokens, assertions), so tests can prove none leaks.
    public internal(set) var issuedSecrets: [String] = []

    /// Creates a simulator of `world` on `clock`, minting secrets from `seed`.
    public init(world: SimulatedWorld = .default, clock: any EngineClock, seed: UInt64 = 7) {
        self.world = world
        self.clock = clock
        self.random = SeededRandomSource(seed: seed)
    }

    /// The backend port the engine talks to.
    public nonisolated var backend: SimulatedBackend { SimulatedBackend(simulator: self) }

    /// A browser that loads this simulator's pages.
    public nonisolated var userAgent: SimulatedUserAgent { SimulatedUserAgent(simulator: self) }

    // MARK: - Faults

    /// Makes the next `times` requests of `operation` fail with `fault` (nil: until ``heal(_:)``).
    public func inject(_ fault: SimulatedFault, into operation: BackendOperation, times: Int? = 1) {
        faults[operation] = (fault, times)
    }

    /// Removes the fault on `operation`.
    public func heal(_ operation: BackendOperation) { faults[operation] = nil }

    // MARK: - Holding answers (deterministic interleavings)

    /// Makes requests of `operation` wait until ``release(_:)``: tests use it to let results
    /// arrive late (after a cancel, logout or reconfiguration) or to overlap requests.
    public func hold(_ operation: BackendOperation) { held.insert(operation) }

    /// Returns once `count` requests of `operation` are waiting (they were sent and are held).
    public func whenWaiting(_ operation: BackendOperation, count: Int = 1) async {
        guard waitingCount(operation) < count else { return }
        await withCheckedContinuation { watchers.append((operation, count, $0)) }
    }

    /// How many requests of `operation` are waiting.
    public func waitingCount(_ operation: BackendOperation) -> Int { waiting.filter { $0.operation == operation }.count }

    /// Lets the oldest waiting request of `operation` proceed; false when none waits.
    @discardableResult
    public func release(_ operation: BackendOperation) -> Bool {
        guard let index = waiting.firstIndex(where: { $0.operation == operation }) else { return false }
        waiting.remove(at: index).resume.resume()
        return true
    }

    /// Stops holding `operation` and lets every waiting request of it proceed, oldest first.
    public func releaseAll(_ operation: BackendOperation) {
        held.remove(operation)
        while release(operation) {}
    }

    func takeFault(_ operation: BackendOperation) -> SimulatedFault? {
        guard let (fault, remaining) = faults[operation] else { return nil }
        if let remaining {
            faults[operation] = remaining > 1 ? (fault, remaining - 1) : nil
        }
        return fault
    }

    func mint(_ prefix: String) -> String {
        let secret = prefix + Base64URL.encode(random.bytes(24))
        issuedSecrets.append(secret)
        return secret
    }

    // MARK: - Backend port

    /// Answers one backend request (after any hold and any injected fault).
    public func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        requestCounts[request.operation, default: 0] += 1
        if held.contains(request.operation) {
            await withCheckedContinuation { continuation in
                waiting.append((request.operation, continuation))
                let satisfied = watchers.filter { $0.operation == request.operation && waitingCount($0.operation) >= $0.count }
                watchers.removeAll { $0.operation == request.operation && waitingCount($0.operation) >= $0.count }
                for watcher in satisfied { watcher.resume.resume() }
            }
        }
        switch takeFault(request.operation) {
        case .fail(let error): throw error
        case .answerGarbage: return request.operation == .userMetadata ? .preauthorized([]) : .userMetadata(nil, encrypted: false)
        case nil: break
        }
        switch request {
        case .configuration(let requestorID, _, _, _): return try configuration(requestorID)
        case .exchangeCode(let exchange): return .authenticated(try exchangeCode(exchange))
        case .exchangePlatformAssertion(let context, let assertion):
            return .authenticated(try exchangeAssertion(context, assertion))
        case .startTempPass(let context, let mvpdID, _):
            return .authenticated(try startTempPass(context, mvpdID))
        case .singleSignOn(let context, let authentication):
            return .authenticated(try singleSignOn(context, authentication))
        case .passiveAuthentication(let context, let mvpdID):
            return .authenticated(try passiveAuthentication(context, mvpdID))
        case .registrationCode(let context, let mvpdID, let lifetime):
            return .registrationCode(try registrationCode(context, mvpdID, lifetime))
        case .checkRegistration(let context, let code):
            return try checkRegistration(context, code)
        case .authorize(let context, let authentication, let resource, _):
            return .authorized(try authorize(context, authentication, resource))
        case .mediaToken(let context, let authentication, let authorization):
            return .mediaToken(try mediaToken(context, authentication, authorization))
        case .preauthorize(let context, let authentication, let resources):
            let user = try validUser(context, authentication)
            return .preauthorized(
                resources.map { resource in
                    switch entitled(user, resource, context) {
                    case nil: PreauthorizationDecision(resource: resource, authorized: true)
                    case .denied("unknown_resource", _)?:
                        PreauthorizationDecision(resource: resource, authorized: false, error: "unknown_resource")
                    default: PreauthorizationDecision(resource: resource, authorized: false)
                    }
                })
        case .userMetadata(let context, let authentication, let name):
            let user = try validUser(context, authentication)
            return .userMetadata(user.metadata[name], encrypted: user.encryptedMetadata.contains(name))
        }
    }

    func configuration(_ requestorID: String) throws(BackendError) -> BackendResponse {
        guard let requestor = world.requestor(requestorID) else {
            throw .denied(code: "invalid_requestor", message: "Unknown requestor '\(requestorID)'.")
        }
        return .configuration(
            RequestorConfiguration(
                requestorID: requestor.id, mvpds: requestor.mvpdIDs.compactMap { world.provider($0)?.mvpd },
                authenticationEndpoint: "\(world.serviceProvider)/api/v1/authenticate",
                logoutEndpoint: "\(world.serviceProvider)/api/v1/logout"))
    }

    /// A one-time code is signed (HMAC-SHA-256 with the world's key) over what it was issued for,
    /// so a simulator in another process with the same world can redeem it; each simulator still
    /// redeems a code once.
    func signedCode(_ session: LoginSession, username: String, expires: Timestamp) -> String {
        let payload: JSONValue = [
            "requestor": .string(session.requestorID), "mvpd": .string(session.mvpdID), "device": .string(session.deviceID),
            "redirect": .string(session.redirectURI), "challenge": .string(session.codeChallenge), "user": .string(username),
            "expires": .int(expires.milliseconds), "nonce": .string(Base64URL.encode(random.bytes(12))),
        ]
        let bytes = payload.canonicalBytes
        let code = "code." + Base64URL.encode(bytes) + "."
            + Base64URL.encode(HMACSHA256.authenticationCode(for: bytes, key: world.mediaTokenKey))
        issuedSecrets.append(code)
        return code
    }

    /// The code's record: minted here, or signed by a simulator of the same world elsewhere.
    func issuedCode(_ code: String) -> IssuedCode? {
        if let known = codes[code] { return known }
        let parts = code.split(separator: ".")
        guard parts.count == 3, parts[0] == "code", let payload = Base64URL.decode(String(parts[1])),
            let signature = Base64URL.decode(String(parts[2])),
            HMACSHA256.isValid(signature, for: payload, key: world.mediaTokenKey),
            let claims = try? JSONReader.read(String(decoding: payload, as: UTF8.self)),
            let requestor = claims["requestor"]?.string, let mvpd = claims["mvpd"]?.string,
            let device = claims["device"]?.string, let redirect = claims["redirect"]?.string,
            let challenge = claims["challenge"]?.string, let user = claims["user"]?.string,
            let expires = claims["expires"]?.int
        else { return nil }
        let session = LoginSession(
            requestorID: requestor, mvpdID: mvpd, deviceID: device, redirectURI: redirect, state: "",
            codeChallenge: challenge)
        return IssuedCode(session: session, username: user, expires: Timestamp(milliseconds: expires))
    }

    func exchangeCode(_ exchange: CodeExchange) throws(BackendError) -> AuthenticationToken {
        guard var issued = issuedCode(exchange.code) else { throw .denied(code: "invalid_grant", message: "Unknown code.") }
        guard !issued.used else {
            // RFC 6749 §4.1.2: a reused code revokes what it produced.
            if let token = issued.tokenIssued { authentications[token]?.revoked = true }
            throw .denied(code: "invalid_grant", message: "The code was already used.")
        }
        guard clock.now() < issued.expires else { throw .denied(code: "invalid_grant", message: "The code expired.") }
        let session = issued.session
        guard PKCE.challenge(for: exchange.codeVerifier) == session.codeChallenge else {
            throw .denied(code: "invalid_grant", message: "PKCE verification failed.")
        }
        guard exchange.redirectURL == session.redirectURI, exchange.context.requestorID == session.requestorID,
            exchange.context.deviceID == session.deviceID, exchange.mvpdID == session.mvpdID,
            let user = world.user(issued.username), let provider = world.provider(session.mvpdID)
        else { throw .denied(code: "invalid_grant", message: "The code was issued for another client.") }
        let token = AuthenticationToken(
            value: mint("authn."), mvpdID: provider.id, requestorID: session.requestorID, userID: user.userID,
            expires: clock.now().adding(provider.authenticationTTL))
        issued.used = true
        issued.tokenIssued = token.value
        codes[exchange.code] = issued
        authentications[token.value] = IssuedAuthentication(
            token: token, username: user.username, deviceID: session.deviceID)
        return token
    }

    func validUser(_ context: RequestContext, _ token: AuthenticationToken) throws(BackendError)
        -> SimulatedWorld.User
    {
        guard let issued = authentications[token.value], !issued.revoked else {
            throw .authenticationRequired("the authentication is unknown or was revoked")
        }
        guard clock.now() < issued.token.expires else { throw .authenticationRequired("the authentication expired") }
        guard issued.deviceID == context.deviceID, issued.token.requestorID == context.requestorID,
            let user = issued.tempPassUser ?? world.user(issued.username)
        else { throw .authenticationRequired("the authentication belongs to another device or requestor") }
        return user
    }

    /// Nil when `user` may watch `resource`, else the denial.
    func entitled(_ user: SimulatedWorld.User, _ resource: String, _ context: RequestContext) -> BackendError? {
        guard world.requestor(context.requestorID)?.resources.contains(resource) == true else {
            return .denied(code: "unknown_resource", message: "The resource '\(resource)' is unknown.")
        }
        if let message = user.denials[resource] { return .denied(code: "authorization_denied_by_mvpd", message: message) }
        guard user.entitlements.contains(resource) else {
            return .denied(
                code: "authorization_denied_by_mvpd", message: "Your subscription does not include '\(resource)'.")
        }
        return nil
    }

    func authorize(_ context: RequestContext, _ authentication: AuthenticationToken, _ resource: String)
        throws(BackendError) -> AuthorizationToken
    {
        let user = try validUser(context, authentication)
        if let denial = entitled(user, resource, context) { throw denial }
        let ttl = world.provider(user.mvpdID)?.authorizationTTL ?? .seconds(86_400)
        // A TempPass's authorizations end with it (Adobe: "authN and authZ tokens share the expiry").
        let isTempPass = authentications[authentication.value]?.tempPassUser != nil
        let expires = isTempPass ? min(clock.now().adding(ttl), authentication.expires) : clock.now().adding(ttl)
        let token = AuthorizationToken(value: mint("authz."), resource: resource, expires: expires)
        authorizations[token.value] = IssuedAuthorization(token: token, authentication: authentication.value)
        return token
    }

    func mediaToken(
        _ context: RequestContext, _ authentication: AuthenticationToken, _ authorization: AuthorizationToken
    ) throws(BackendError) -> MediaToken {
        let user = try validUser(context, authentication)
        guard let issued = authorizations[authorization.value], issued.authentication == authentication.value,
            issued.token.resource == authorization.resource, clock.now() < issued.token.expires
        else { throw .denied(code: "authorization_not_found", message: "No valid authorization for this resource.") }
        let now = clock.now()
        let claims = MediaTokenVerifier.Claims(
            tokenID: Base64URL.encode(random.bytes(12)), sessionGUID: Hex.encode(Array(SHA256.hash("\(user.mvpdID)/\(user.userID)").prefix(16))),
            requestorID: context.requestorID, resourceID: authorization.resource, issued: now,
            timeToLive: world.mediaTokenTTL.milliseconds, mvpdID: user.mvpdID)
        let serialized = MediaTokenVerifier.sign(claims, key: world.mediaTokenKey)
        issuedSecrets.append(serialized)
        return MediaToken(serialized: serialized, resource: authorization.resource, expires: now.adding(world.mediaTokenTTL))
    }

    // MARK: - Web

    /// Answers one page load or form post.
    public func load(_ request: WebRequest) -> WebResponse {
        guard let url = try? ExternalURL.parse(request.url) else { return .error(status: 400, message: "Bad URL.") }
        let sp = world.serviceProvider
        switch url.base {
        case "\(sp)/api/v1/authenticate": return startLogin(url.parameters)
        case "\(sp)/activate": return startActivation(url.parameters)
        case "\(sp)/api/v1/authenticate/return": return finishLogin(url.parameters)
        case "\(sp)/api/v1/logout": return startLogout(url.parameters)
        case "\(sp)/api/v1/logout/complete": return finishLogout(url.parameters)
        default: break
        }
        for provider in world.providers {
            if url.base == "\(provider.loginHost)/login" { return loginPage(provider, request, url.parameters) }
            if url.base == "\(provider.loginHost)/relay" { return relay(url.parameters) }
            if url.base == "\(provider.loginHost)/logout" { return mvpdLogout(url.parameters) }
        }
        return .error(status: 404, message: "Not found: \(url.base)")
    }

    func startLogin(_ query: [String: String]) -> WebResponse {
        guard let requestorID = query["requestor_id"], let requestor = world.requestor(requestorID),
            let mvpdID = query["mso_id"], requestor.mvpdIDs.contains(mvpdID), let provider = world.provider(mvpdID),
            let deviceID = query["device_id"], let redirectURI = query["redirect_uri"], let state = query["state"],
            !state.isEmpty, let challenge = query["code_challenge"], query["code_challenge_method"] == "S256"
        else { return .error(status: 400, message: "Invalid authentication request.") }
        let session = mint("session.")
        loginSessions[session] = LoginSession(
            requestorID: requestorID, mvpdID: mvpdID, deviceID: deviceID, redirectURI: redirectURI, state: state,
            codeChallenge: challenge)
        return .redirect(PercentEncoding.url("\(provider.loginHost)/login", query: [("session", session)]))
    }

    func loginPage(_ provider: SimulatedWorld.Provider, _ request: WebRequest, _ query: [String: String])
        -> WebResponse
    {
        let sessionID = request.method == .post ? request.form["session"] : query["session"]
        guard let sessionID, var session = loginSessions[sessionID], session.mvpdID == provider.id else {
            return .error(status: 400, message: "Unknown login session.")
        }
        let form = LoginForm(action: "\(provider.loginHost)/login", hiddenFields: ["session": sessionID])
        let page = WebPage(url: "\(provider.loginHost)/login", title: "\(provider.displayName) sign in", message: nil, form: form)
        guard request.method == .post else { return .page(page) }
        if request.form["action"] == "cancel" {
            loginSessions[sessionID] = nil
            return .redirect(
                PercentEncoding.url(
                    session.redirectURI,
                    query: [
                        ("error", "access_denied"), ("error_description", "The user cancelled the sign-in."),
                        ("state", session.state), ("mvpd", provider.id),
                    ]))
        }
        guard let username = request.form["username"], let user = world.user(username), user.mvpdID == provider.id,
            request.form["password"] == user.password
        else {
            var retry = page
            retry.message = "Invalid username or password."
            return .page(retry)
        }
        let assertion = mint("saml.")
        mvpdSessions[session.deviceID + "|" + provider.id] = (username, clock.now().adding(provider.authenticationTTL))
        session.username = username
        session.assertion = assertion
        session.hopsLeft = provider.extraLoginHops
        loginSessions[sessionID] = session
        return relayOrReturn(sessionID, session)
    }

    /// The next SAML-style relay hop, or the service provider's return endpoint when none is left.
    func relayOrReturn(_ sessionID: String, _ session: LoginSession) -> WebResponse {
        guard session.hopsLeft > 0, let provider = world.provider(session.mvpdID) else {
            return .redirect(
                PercentEncoding.url(
                    "\(world.serviceProvider)/api/v1/authenticate/return",
                    query: [("session", sessionID), ("assertion", session.assertion ?? "")]))
        }
        return .redirect(
            PercentEncoding.url(
                "\(provider.loginHost)/relay", query: [("session", sessionID), ("hop", String(session.hopsLeft))]))
    }

    func relay(_ query: [String: String]) -> WebResponse {
        guard let sessionID = query["session"], var session = loginSessions[sessionID], session.hopsLeft > 0,
            query["hop"] == String(session.hopsLeft)
        else { return .error(status: 400, message: "Unknown relay.") }
        session.hopsLeft -= 1
        loginSessions[sessionID] = session
        return relayOrReturn(sessionID, session)
    }

    func finishLogin(_ query: [String: String]) -> WebResponse {
        guard let sessionID = query["session"], let session = loginSessions[sessionID],
            let username = session.username, session.hopsLeft == 0, session.assertion == query["assertion"]
        else { return .error(status: 400, message: "Invalid assertion.") }
        loginSessions[sessionID] = nil
        if let code = session.registrationCode {
            // A second-screen login ends here: the TV's next poll finds the user signed in.
            guard registrations[code] != nil else { return .error(status: 400, message: "Unknown or expired code.") }
            registrations[code]?.username = username
            return .page(WebPage(url: "\(world.serviceProvider)/activate/done", title: "Signed in", message: "Return to your TV."))
        }
        let expires = clock.now().adding(world.codeTTL)
        let code = signedCode(session, username: username, expires: expires)
        codes[code] = IssuedCode(session: session, username: username, expires: expires)
        return .redirect(
            PercentEncoding.url(
                session.redirectURI, query: [("code", code), ("state", session.state), ("mvpd", session.mvpdID)]))
    }

    func startLogout(_ query: [String: String]) -> WebResponse {
        guard let requestorID = query["requestor_id"], let deviceID = query["device_id"],
            let redirectURI = query["redirect_uri"], let state = query["state"]
        else { return .error(status: 400, message: "Invalid logout request.") }
        var providers: [String] = []
        for (value, issued) in authentications
        where issued.deviceID == deviceID && issued.token.requestorID == requestorID && !issued.revoked {
            authentications[value]?.revoked = true
            if !providers.contains(issued.token.mvpdID) { providers.append(issued.token.mvpdID) }
        }
        let logoutID = mint("logout.")
        logoutSessions[logoutID] = LogoutSession(redirectURI: redirectURI, state: state)
        let complete = PercentEncoding.url("\(world.serviceProvider)/api/v1/logout/complete", query: [("logout", logoutID)])
        guard let mvpd = providers.sorted().first, let provider = world.provider(mvpd), provider.hasLogoutPage else {
            return .redirect(complete)
        }
        // The MVPD's logout page ends its own session on the device too.
        mvpdSessions[deviceID + "|" + provider.id] = nil
        return .redirect(PercentEncoding.url("\(provider.loginHost)/logout", query: [("continue", complete)]))
    }

    func mvpdLogout(_ query: [String: String]) -> WebResponse {
        // The MVPD only continues to its service provider: never an open redirector.
        guard let next = query["continue"], next.hasPrefix(world.serviceProvider + "/") else {
            return .error(status: 400, message: "Refusing to redirect outside the service provider.")
        }
        return .redirect(next)
    }

    func finishLogout(_ query: [String: String]) -> WebResponse {
        guard let logoutID = query["logout"], let session = logoutSessions.removeValue(forKey: logoutID) else {
            return .error(status: 400, message: "Unknown logout.")
        }
        return .redirect(PercentEncoding.url(session.redirectURI, query: [("state", session.state)]))
    }
}

/// The simulator as the engine's backend port.
public struct SimulatedBackend: EntitlementBackend {
    /// The simulator answering.
    public let simulator: Simulator

    /// Forwards `request` to the simulator.
    public func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        try await simulator.perform(request)
    }
}
