import EntitlementEngine
import EntitlementSimulator
import Foundation
import Testing

@Suite("The simulated programmer backend, MVPDs and user agent")
struct SimulatorTests {
    let clock = ManualClock()
    let verifier = PKCE.verifier(from: [UInt8](repeating: 7, count: 32))
    let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-1")

    var simulator: Simulator { Simulator(clock: clock) }

    func loginURL(state: String = "state-1", mvpd: String = "acme-cable", challenge: String? = nil) -> String {
        PercentEncoding.url(
            "https://sp.sim/api/v1/authenticate",
            query: [
                ("requestor_id", "sim-requestor"), ("mso_id", mvpd), ("device_id", "device-1"),
                ("redirect_uri", "adobepass://ios.app"), ("state", state),
                ("code_challenge", challenge ?? PKCE.challenge(for: verifier)), ("code_challenge_method", "S256"),
            ])
    }

    func exchange(_ code: String, verifier: String? = nil, mvpd: String = "acme-cable") -> BackendRequest {
        .exchangeCode(
            CodeExchange(
                context: context, mvpdID: mvpd, code: code, codeVerifier: verifier ?? self.verifier,
                redirectURL: "adobepass://ios.app"))
    }

    func code(_ simulator: Simulator, user: String = "alice", password: String = "wonderland") async -> String {
        let visit = await simulator.userAgent.logIn(at: loginURL(), username: user, password: password)
        return visit.appURL.flatMap { try? ExternalURL.parse($0).parameters["code"] } ?? ""
    }

    @Test func theDefaultWorldHasWhatTheIssueAsksFor() {
        let world = SimulatedWorld.default
        #expect(world.requestors.count >= 2)
        #expect(world.providers.count >= 4)
        #expect(world.users.count >= 6)
        #expect(world.users.contains { !$0.denials.isEmpty })
        #expect(world.users.allSatisfy { $0.metadata["zip"] != nil && $0.metadata["householdID"] != nil })
    }

    @Test func loginChainEndsAtTheAppWithCodeStateAndMVPD() async throws {
        let visit = await simulator.userAgent.logIn(at: loginURL(), username: "alice", password: "wonderland")
        let app = try #require(visit.appURL)
        let url = try ExternalURL.parse(app)
        #expect(url.base == "adobepass://ios.app")
        #expect(url.parameters["state"] == "state-1")
        #expect(url.parameters["mvpd"] == "acme-cable")
        #expect(url.parameters["code"]?.isEmpty == false)
        #expect(visit.hops.contains { $0.hasPrefix("https://login.acme-cable.sim/login") })
        #expect(visit.hops.contains("POST https://login.acme-cable.sim/login"))
    }

    @Test func extraLoginHopsAndAMissingLogoutPageShapeTheChains() async throws {
        var world = SimulatedWorld.default
        world.providers[0].extraLoginHops = 2
        world.providers[0].hasLogoutPage = false
        let simulator = Simulator(world: world, clock: clock)
        let visit = await simulator.userAgent.logIn(at: loginURL(), username: "alice", password: "wonderland")
        #expect(visit.hops.filter { $0.hasPrefix("https://login.acme-cable.sim/relay") }.count == 2)
        #expect(visit.appURL != nil)
        let logout = PercentEncoding.url(
            "https://sp.sim/api/v1/logout",
            query: [("requestor_id", "sim-requestor"), ("device_id", "device-1"), ("redirect_uri", "adobepass://ios.app"), ("state", "s")])
        let back = await simulator.userAgent.follow(logout)
        #expect(!back.hops.contains { $0.contains("/logout?continue") })
        #expect(back.appURL == "adobepass://ios.app?state=s")
    }

    @Test func aWrongPasswordStaysOnTheLoginPage() async {
        let visit = await simulator.userAgent.logIn(at: loginURL(), username: "alice", password: "nope")
        guard case .stoppedAt(let page) = visit.outcome else {
            Issue.record("expected the login page, got \(visit.outcome)")
            return
        }
        #expect(page.message == "Invalid username or password.")
    }

    @Test func aUserOfAnotherMVPDCannotSignInHere() async {
        let visit = await simulator.userAgent.logIn(at: loginURL(), username: "carol", password: "carolina")
        #expect(visit.appURL == nil)
    }

    @Test func cancellingTheLoginRedirectsWithAnErrorAndTheState() async throws {
        let visit = await simulator.userAgent.cancelLogin(at: loginURL())
        let url = try ExternalURL.parse(try #require(visit.appURL))
        #expect(url.parameters["error"] == "access_denied")
        #expect(url.parameters["state"] == "state-1")
        #expect(url.parameters["code"] == nil)
    }

    @Test func aLoginRequestWithoutPKCEOrStateIsRefused() async {
        let noChallenge = loginURL().replacingFirst("code_challenge_method=S256", with: "code_challenge_method=plain")
        #expect(await simulator.userAgent.follow(noChallenge).appURL == nil)
        let noState = loginURL(state: "")
        #expect(await simulator.userAgent.follow(noState).appURL == nil)
    }

    @Test func codesAreSingleUseAndAReuseRevokesTheToken() async throws {
        let simulator = self.simulator
        let code = await code(simulator)
        guard case .authenticated(let token) = try await simulator.perform(exchange(code)) else {
            Issue.record("no token")
            return
        }
        #expect(token.mvpdID == "acme-cable")
        await #expect(throws: BackendError.denied(code: "invalid_grant", message: "The code was already used.")) {
            try await simulator.perform(exchange(code))
        }
        await #expect(throws: BackendError.self) {
            try await simulator.perform(.authorize(context, authentication: token, resource: "news-channel", data: [:]))
        }
    }

    @Test func codesExpireAfterTenMinutes() async throws {
        let simulator = self.simulator
        let code = await code(simulator)
        await clock.advance(by: .seconds(600))
        await #expect(throws: BackendError.denied(code: "invalid_grant", message: "The code expired.")) {
            try await simulator.perform(exchange(code))
        }
    }

    @Test func pkceIsCheckedAtTheExchange() async throws {
        let simulator = self.simulator
        let code = await code(simulator)
        let wrong = PKCE.verifier(from: [UInt8](repeating: 8, count: 32))
        await #expect(throws: BackendError.denied(code: "invalid_grant", message: "PKCE verification failed.")) {
            try await simulator.perform(exchange(code, verifier: wrong))
        }
    }

    @Test func aCodeIsBoundToItsMVPD() async throws {
        let simulator = self.simulator
        let code = await code(simulator)
        await #expect(throws: BackendError.self) { try await simulator.perform(exchange(code, mvpd: "bluesky-tv")) }
    }

    @Test func authorizationFollowsEntitlementsAndDenialMessages() async throws {
        let simulator = self.simulator
        let visit = await simulator.userAgent.logIn(
            at: loginURL(mvpd: "bluesky-tv"), username: "frank", password: "furnace")
        let code = try #require(visit.appURL.flatMap { try? ExternalURL.parse($0).parameters["code"] })
        guard case .authenticated(let token) = try await simulator.perform(exchange(code, mvpd: "bluesky-tv")) else {
            Issue.record("no token")
            return
        }
        let allowed = try await simulator.perform(
            .authorize(context, authentication: token, resource: "news-channel", data: [:]))
        guard case .authorized(let authorization) = allowed else {
            Issue.record("not authorized: \(allowed)")
            return
        }
        #expect(authorization.resource == "news-channel")
        await #expect(
            throws: BackendError.denied(
                code: "authorization_denied_by_mvpd",
                message: "Your BlueSky TV package does not include Sports Live. Call 1-800-555-0100 to upgrade.")
        ) {
            try await simulator.perform(.authorize(context, authentication: token, resource: "sports-live", data: [:]))
        }
        let media = try await simulator.perform(.mediaToken(context, authentication: token, authorization: authorization))
        guard case .mediaToken(let mediaToken) = media else {
            Issue.record("no media token")
            return
        }
        #expect(mediaToken.expires == clock.now().adding(.seconds(420)))
    }

    @Test func logoutRevokesTheDeviceTokensAndRunsTheMVPDChain() async throws {
        let simulator = self.simulator
        let code = await code(simulator)
        guard case .authenticated(let token) = try await simulator.perform(exchange(code)) else { return }
        let logout = PercentEncoding.url(
            "https://sp.sim/api/v1/logout",
            query: [
                ("requestor_id", "sim-requestor"), ("device_id", "device-1"), ("redirect_uri", "adobepass://ios.app"),
                ("state", "bye"),
            ])
        let visit = await simulator.userAgent.follow(logout)
        #expect(visit.appURL == "adobepass://ios.app?state=bye")
        #expect(visit.hops.contains { $0.hasPrefix("https://login.acme-cable.sim/logout") })
        await #expect(throws: BackendError.self) {
            try await simulator.perform(.authorize(context, authentication: token, resource: "news-channel", data: [:]))
        }
    }

    @Test func theMVPDLogoutPageIsNotAnOpenRedirector() async {
        let evil = PercentEncoding.url("https://login.acme-cable.sim/logout", query: [("continue", "https://evil.example/")])
        let visit = await simulator.userAgent.follow(evil)
        #expect(!visit.hops.contains("https://evil.example/"))
    }

    @Test func faultsFireOnceOrUntilHealed() async throws {
        let simulator = self.simulator
        let request = BackendRequest.configuration(
            requestorID: "sim-requestor", serviceProviders: [], deviceID: "device-1", options: [:])
        await simulator.inject(.fail(.timeout), into: .configuration)
        await #expect(throws: BackendError.timeout) { try await simulator.perform(request) }
        _ = try await simulator.perform(request)
        await simulator.inject(.fail(.throttled(retryAfterSeconds: 1)), into: .configuration, times: nil)
        for _ in 0..<3 { await #expect(throws: BackendError.self) { try await simulator.perform(request) } }
        await simulator.heal(.configuration)
        _ = try await simulator.perform(request)
        #expect(await simulator.requestCounts[.configuration] == 6)
    }

    @Test func unknownRequestorsAreDenied() async {
        await #expect(throws: BackendError.self) {
            try await simulator.perform(
                .configuration(requestorID: "nobody", serviceProviders: [], deviceID: "d", options: [:]))
        }
    }
}

extension String {
    fileprivate func replacingFirst(_ target: String, with replacement: String) -> String {
        guard let range = firstRange(of: target) else { return self }
        var copy = self
        copy.replaceSubrange(range, with: replacement)
        return copy
    }
}

/// The DocC article's example is the code this test runs.
@Suite("The simulator's article stays true")
struct SimulatorArticleTests {
    static let article = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("Sources/EntitlementSimulator/EntitlementSimulator.docc/TestingWithTheSimulator.md")

    @Test func theArticlesExampleRunsAndIsVerbatim() async throws {
        let text = try String(contentsOf: Self.article, encoding: .utf8)
        let block = try #require(text.components(separatedBy: "```swift\n").dropFirst().first?.components(separatedBy: "\n```").first)
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let lines = source.components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// ARTICLE-BEGIN") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// ARTICLE-END") })
        let region = lines[(begin + 1)..<end].map { String($0.dropFirst(8)) }.joined(separator: "\n")
        #expect(region == block)
        // ARTICLE-BEGIN
        let session = SimulatedSession()                           // default world, device-1, seed 1
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthorization("sports-live")      // not logged in: the picker comes first
        await session.enabler.setSelectedProvider("acme-cable")   // → navigateToUrl(login page)
        await session.settle()
        await session.logIn(as: "alice", password: "wonderland")  // the web view signs in, hands the URL back
        let callbacks = session.ledger.take()
        // setRequestorComplete, displayProviderDialog, …, setAuthenticationStatus(1), setToken(…, "sports-live")
        let problems = session.ledger.violations()                 // exactly once, nothing unchecked
        // ARTICLE-END
        #expect(callbacks.contains(.setAuthenticationStatus(status: 1, errorCode: "")))
        #expect(callbacks.last?.name == "setToken")
        #expect(problems.isEmpty, "\(problems)")
    }
}

