import EntitlementEngine
@testable import EntitlementSimulator
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

@Suite("The simulated REST API V2 service, MVPDs and user agent")
struct SimulatorTests {
    let clock = ManualClock()
    let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-1")
    static let redirect = "adobepass://ios.app?state=s1&mvpd=acme-cable"

    var simulator: Simulator { Simulator(clock: clock) }

    /// `POST sessions` for the device.
    func session(_ simulator: Simulator, mvpd: String = "acme-cable", redirect: String? = Self.redirect) async throws -> V2Session {
        let answer = try await simulator.perform(.createSession(context, mvpd: mvpd, domainName: "sim-app.example", redirectURL: redirect))
        guard case .session(let session) = answer else { throw BackendError.malformedResponse("\(answer)") }
        return session
    }

    /// Logs `user` in through a new session; the session and the browser's visit.
    func logIn(
        _ simulator: Simulator, mvpd: String = "acme-cable", user: String = "alice", password: String = "wonderland"
    ) async throws -> (session: V2Session, visit: SimulatedUserAgent.Visit) {
        let session = try await session(simulator, mvpd: mvpd)
        let visit = await simulator.userAgent.logIn(at: try #require(session.url), username: user, password: password)
        return (session, visit)
    }

    func profiles(_ simulator: Simulator, _ request: BackendRequest) async throws -> [String: V2Profile] {
        guard case .profiles(let profiles) = try await simulator.perform(request) else { throw BackendError.malformedResponse("") }
        return profiles
    }

    func decisions(_ simulator: Simulator, _ resource: String, mvpd: String = "acme-cable") async throws -> [V2Decision] {
        guard case .decisions(let decisions) = try await simulator.perform(.authorize(context, mvpd: mvpd, resource: resource)) else {
            throw BackendError.malformedResponse("")
        }
        return decisions
    }

    @Test func theDefaultWorldHasWhatTheIssueAsksFor() {
        let world = SimulatedWorld.default
        #expect(world.requestors.count >= 2)
        #expect(world.providers.count >= 4)
        #expect(world.users.count >= 6)
        #expect(world.users.contains { !$0.denials.isEmpty })
        #expect(world.users.allSatisfy { $0.metadata["zip"] != nil && $0.metadata["householdID"] != nil })
    }

    /// A redirect URL the simulator could not put in a `Location` header safely (an encoded CR LF would
    /// let the requester write headers of its own into the answer that ends the login or the logout) is
    /// refused where it is given, with Adobe's `invalid_parameter_redirect_url`.
    @Test(arguments: ["https://app.example/done\r\nSet-Cookie: a=b", "https://app.example/a b", "https://app.example/\u{0}", "no-scheme"])
    func aRedirectURLThatCannotBeSentBackIsRefused(redirect: String) async throws {
        let simulator = simulator
        for request in [
            BackendRequest.createSession(context, mvpd: "acme-cable", domainName: "sim-app.example", redirectURL: redirect),
            .logout(context, mvpd: "acme-cable", redirectURL: redirect),
        ] {
            do {
                _ = try await simulator.perform(request)
                Issue.record("\(request) was accepted")
            } catch {
                #expect("\(error)".contains("invalid_parameter_redirect_url"), "\(error)")
            }
        }
    }

    /// A long-running simulator holds only live sessions: expired ones go when a session is created.
    @Test func expiredSessionsAreDropped() async throws {
        let simulator = simulator
        for device in 0..<50 {
            let context = RequestContext(requestorID: "sim-requestor", deviceID: "device-\(device)")
            _ = try await simulator.perform(.createSession(context, mvpd: "acme-cable", domainName: "d", redirectURL: Self.redirect))
        }
        await expectEqual(simulator.sessionCount, 50)
        await clock.advance(by: .seconds(1801))
        _ = try await session(simulator)
        await expectEqual(simulator.sessionCount, 1)
    }

    /// Making a session looks at the device's older sessions and the expired ones only, not at every live
    /// one (0.9.2 scanned them all: 5,000 new sessions took 10, 21, 44, then 68 s): the sessions looked at
    /// stay at most two per session made (when replaced, when its time runs out), from 0 to 20,000 live.
    @Test func makingASessionLooksAtNoOtherDevicesSessions() async throws {
        let simulator = simulator
        for device in 0..<20_000 {
            let context = RequestContext(requestorID: "sim-requestor", deviceID: "other-\(device)")
            _ = try await simulator.perform(.createSession(context, mvpd: "acme-cable", domainName: "d", redirectURL: Self.redirect))
        }
        await expectEqual(simulator.sessionCount, 20_000)
        await expectEqual(simulator.sessionsExamined, 0, "no device had a session before, none expired")
        _ = try await session(simulator)
        _ = try await session(simulator)  // device-1's new session replaces its older one
        await expectEqual(simulator.sessionCount, 20_001)
        await expectEqual(simulator.sessionsExamined, 1)
        await clock.advance(by: .seconds(1801))
        _ = try await session(simulator)
        await expectEqual(simulator.sessionCount, 1, "every expired session went")
        await expectEqual(simulator.sessionCodes.count, 1, "and its index entry with it")
        let examined = await simulator.sessionsExamined
        #expect(examined <= 2 * 20_003, "each session made is looked at when replaced and when its time ran out, no more: \(examined)")
    }

    @Test func aSessionIsALoginURLAndACodeValidForThirtyMinutes() async throws {
        let session = try await session(simulator)
        #expect(session.actionName == .authenticate && session.actionType == .interactive && session.reasonType == .none)
        let code = try #require(session.code)
        expectEqual(session.url, "https://sp.sim/api/v2/authenticate/sim-requestor/\(code)")
        expectEqual(session.notAfter, clock.now().adding(.seconds(1800)))
        #expect(session.serviceProvider == "sim-requestor" && session.mvpd == "acme-cable")
    }

    @Test func theLoginChainSavesAProfileAndEndsAtTheRedirectURLWithNothingAppended() async throws {
        let simulator = self.simulator
        let (session, visit) = try await logIn(simulator)
        expectEqual(visit.appURL, Self.redirect)
        #expect(visit.hops.contains { $0.hasPrefix("https://login.acme-cable.sim/login") })
        #expect(visit.hops.contains("POST https://login.acme-cable.sim/login"))
        let profiles = try await profiles(simulator, .profileByCode(context, code: try #require(session.code)))
        let profile = try #require(profiles["acme-cable"])
        #expect(profile.kind == .regular && profile.issuer == "acme-cable")
        expectEqual(profile.attributes["userID"]?.value, .string("acme-7f3a"))
        expectEqual(profile.attributes["encryptedZip"]?.encrypted, true)
        expectEqual(profile.notAfter, clock.now().adding(.seconds(86_400)))
        try await expectEqual(self.profiles(simulator, .profile(context, mvpd: "acme-cable"))["acme-cable"], profile)
    }

    @Test func beforeTheLoginTheProfileByCodeIsEmptyAndAnExpiredCodeIsRefused() async throws {
        let simulator = self.simulator
        let session = try await session(simulator)
        let code = try #require(session.code)
        #expect(try await profiles(simulator, .profileByCode(context, code: code)).isEmpty)
        await clock.advance(by: .seconds(1800))
        await #expect(throws: BackendError.httpStatus(400, "invalid_authentication_session: The authentication session is unknown or expired.")) {
            try await simulator.perform(.profileByCode(context, code: code))
        }
    }

    @Test func aNewSessionReplacesTheDevicesOlderOne() async throws {
        let simulator = self.simulator
        let first = try await session(simulator)
        _ = try await session(simulator)
        let visit = await simulator.userAgent.logIn(at: try #require(first.url), username: "alice", password: "wonderland")
        #expect(visit.appURL == nil)
    }

    @Test func extraLoginHopsAndAMissingLogoutPageShapeTheChains() async throws {
        var world = SimulatedWorld.default
        world.providers[0].extraLoginHops = 2
        world.providers[0].hasLogoutPage = false
        let simulator = Simulator(world: world, clock: clock)
        let (_, visit) = try await logIn(simulator)
        expectEqual(visit.hops.filter { $0.hasPrefix("https://login.acme-cable.sim/relay") }.count, 2)
        #expect(visit.appURL != nil)
        let logout = try await simulator.perform(.logout(context, mvpd: "acme-cable", redirectURL: "adobepass://ios.app?state=s"))
        expectEqual(logout, .logouts(["acme-cable": V2Logout(actionName: .complete, actionType: .none, mvpd: "acme-cable")]))
    }

    @Test func aWrongPasswordStaysOnTheLoginPage() async throws {
        let (_, visit) = try await logIn(simulator, password: "nope")
        guard case .stoppedAt(let page) = visit.outcome else {
            Issue.record("expected the login page, got \(visit.outcome)")
            return
        }
        expectEqual(page.message, "Invalid username or password.")
    }

    @Test func aUserOfAnotherMVPDCannotSignInHere() async throws {
        let (_, visit) = try await logIn(simulator, user: "carol", password: "carolina")
        #expect(visit.appURL == nil)
    }

    @Test func cancellingTheLoginRedirectsWithAnErrorAndKeepsTheRedirectURLsOwnQuery() async throws {
        let simulator = self.simulator
        let session = try await session(simulator)
        let visit = await simulator.userAgent.cancelLogin(at: try #require(session.url))
        let url = try ExternalURL.parse(try #require(visit.appURL))
        expectEqual(url.parameters["error"], "access_denied")
        expectEqual(url.parameters["state"], "s1")
        #expect(try await profiles(simulator, .profileByCode(context, code: try #require(session.code))).isEmpty)
    }

    @Test func aSecondScreenSessionResumesOnTheActivationPage() async throws {
        let simulator = self.simulator
        let session = try await session(simulator, redirect: nil)
        #expect(session.actionName == .resume && session.missingParameters == ["redirectUrl"])
        let code = try #require(session.code)
        let visit = await simulator.userAgent.activate(code: code, username: "alice", password: "wonderland")
        guard case .stoppedAt(let page) = visit.outcome else {
            Issue.record("expected the done page, got \(visit.outcome)")
            return
        }
        expectEqual(page.title, "Signed in")
        #expect(try await profiles(simulator, .profileByCode(context, code: code))["acme-cable"] != nil)
    }

    @Test func decisionsCarryAVerifiableMediaTokenAndDenialsAreItemErrors() async throws {
        let simulator = self.simulator
        _ = try await logIn(simulator, mvpd: "bluesky-tv", user: "frank", password: "furnace")
        let permit = try #require(try await decisions(simulator, "news-channel", mvpd: "bluesky-tv").first)
        #expect(permit.authorized && permit.source == .mvpd && permit.error == nil)
        let token = try #require(permit.token)
        expectEqual(token.notAfter, clock.now().adding(.seconds(420)))
        let verifier = MediaTokenVerifier(key: SimulatedWorld.default.mediaTokenKey, clock: clock)
        expectEqual(verifier.verify(token.serialized, resource: "news-channel", requestor: "sim-requestor"), .valid)
        let claims = try verifier.claims(token.serialized).get()
        expectEqual(claims.mvpdID, "bluesky-tv")
        let deny = try #require(try await decisions(simulator, "sports-live", mvpd: "bluesky-tv").first)
        #expect(!deny.authorized && deny.token == nil)
        #expect(deny.error?.code == "authorization_denied_by_mvpd" && deny.error?.status == 403)
        expectEqual(deny.error?.details, "Your BlueSky TV package does not include Sports Live. Call 1-800-555-0100 to upgrade.")
    }

    @Test func withoutAProfileAnAuthorizationIsSentBackToAuthentication() async throws {
        await #expect(throws: BackendError.authenticationRequired("authenticated_profile_missing: The authenticated profile is missing.")) {
            try await simulator.perform(.authorize(context, mvpd: "acme-cable", resource: "news-channel"))
        }
    }

    @Test func logoutDeletesTheProfileAndRunsTheMVPDsLogoutPage() async throws {
        let simulator = self.simulator
        _ = try await logIn(simulator)
        let answer = try await simulator.perform(.logout(context, mvpd: "acme-cable", redirectURL: "adobepass://ios.app?state=bye"))
        guard case .logouts(let logouts) = answer, let step = logouts["acme-cable"], let url = step.url else {
            Issue.record("no interactive logout: \(answer)")
            return
        }
        #expect(step.actionName == .logout && step.actionType == .interactive)
        let visit = await simulator.userAgent.follow(url)
        expectEqual(visit.appURL, "adobepass://ios.app?state=bye")
        await #expect(throws: BackendError.self) {
            try await simulator.perform(.authorize(context, mvpd: "acme-cable", resource: "news-channel"))
        }
        let again = try await simulator.perform(.logout(context, mvpd: "acme-cable", redirectURL: "adobepass://ios.app?state=bye"))
        expectEqual(again, .logouts(["acme-cable": V2Logout(actionName: .invalid, actionType: .none, mvpd: "acme-cable")]))
    }

    @Test func theMVPDLogoutPageIsNotAnOpenRedirector() async {
        let evil = PercentEncoding.url("https://login.acme-cable.sim/logout", query: [("continue", "https://evil.example/")])
        let visit = await simulator.userAgent.follow(evil)
        #expect(!visit.hops.contains("https://evil.example/"))
    }

    @Test func tempPassAndDegradedAccessNeedNoLoginAndAreIssuedByAdobe() async throws {
        var world = SimulatedWorld.default
        world.providers += [
            SimulatedWorld.Provider(id: "tp", displayName: "TempPass", authenticationTTL: .seconds(3600), tempPass: true),
            SimulatedWorld.Provider(id: "down", displayName: "Down MVPD", degraded: true),
        ]
        world.requestors[0].mvpdIDs += ["tp", "down"]
        let simulator = Simulator(world: world, clock: clock)
        let temporary = try await session(simulator, mvpd: "tp")
        #expect(temporary.actionName == .authorize && temporary.reasonType == .temporary && temporary.code == nil)
        let degraded = try await session(simulator, mvpd: "down")
        #expect(degraded.actionName == .authorize && degraded.reasonType == .degraded)
        let tempProfile = try #require(try await profiles(simulator, .profile(context, mvpd: "tp"))["tp"])
        #expect(tempProfile.kind == .temporary && tempProfile.issuer == "Adobe")
        expectEqual(tempProfile.notAfter, clock.now().adding(.seconds(3600)))
        let degradedProfile = try #require(try await profiles(simulator, .profile(context, mvpd: "down"))["down"])
        #expect(degradedProfile.kind == .degraded && degradedProfile.issuer == "Adobe")
        try await expectEqual(decisions(simulator, "sports-live", mvpd: "down").first?.source, .degradation)
        await clock.advance(by: .seconds(3600))
        await #expect(throws: BackendError.authenticationRequired("temporary_access_duration_limit_exceeded: The temporary access duration limit has been exceeded.")) {
            try await simulator.perform(.profile(context, mvpd: "tp"))
        }
    }

    @Test func faultsFireOnceOrUntilHealed() async throws {
        let simulator = self.simulator
        let request = BackendRequest.configuration(context)
        await simulator.inject(.fail(.timeout), into: .configuration)
        await #expect(throws: BackendError.timeout) { try await simulator.perform(request) }
        _ = try await simulator.perform(request)
        await simulator.inject(.fail(.throttled(retryAfterSeconds: 1)), into: .configuration, times: nil)
        for _ in 0..<3 { await #expect(throws: BackendError.self) { try await simulator.perform(request) } }
        await simulator.heal(.configuration)
        _ = try await simulator.perform(request)
        await expectEqual(simulator.requestCounts[.configuration], 6)
    }

    @Test func unknownRequestorsAreRefusedWithTheEnhancedError() async {
        await #expect(throws: BackendError.httpStatus(400, "invalid_parameter_service_provider: The service provider 'nobody' is not known.")) {
            try await simulator.perform(.configuration(RequestContext(requestorID: "nobody", deviceID: "d")))
        }
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
        expectEqual(region, block)
        // ARTICLE-BEGIN
        let session = SimulatedSession()                           // default world, device-1, seed 1
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthorization("sports-live")      // not logged in: the picker comes first
        await session.enabler.setSelectedProvider("acme-cable")   // a session → navigateToUrl(its login page)
        await session.settle()
        await session.logIn(as: "alice", password: "wonderland")  // the web view signs in, hands the URL back
        let callbacks = session.ledger.take()
        // setRequestorComplete, displayProviderDialog, …, setAuthenticationStatus(1), setToken(…, "sports-live")
        let problems = session.ledger.violations()                 // exactly once, nothing unchecked
        // ARTICLE-END
        #expect(callbacks.contains(.setAuthenticationStatus(status: 1, errorCode: "")))
        expectEqual(callbacks.last?.name, "setToken")
        #expect(problems.isEmpty, "\(problems)")
    }
}

