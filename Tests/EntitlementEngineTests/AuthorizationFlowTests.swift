import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

@Suite("F and G. check/getAuthorization: authorization, fresh media tokens, classified failures", .checksExactlyOnce)
struct AuthorizationFlowTests {
    func token(_ callbacks: [Callback]) -> String? {
        callbacks.lazy.compactMap { if case .setToken(let token, _) = $0 { token } else { nil } }.first
    }

    @Test func checkAuthorizationWhenNotAuthenticatedFailsAtOnceWithoutUI() async {
        let session = SimulatedSession()
        await session.configure()
        let before = session.ledger.backendRequests
        await session.enabler.checkAuthorization("news-channel")
        let callbacks = session.ledger.take()
        expectCallbacks(
            callbacks.withoutTracking,
            [
                .tokenRequestFailed(
                    resource: "news-channel", errorCode: ErrorCode.userNotAuthenticated,
                    errorDescription: "The user is not authenticated.")
            ])
        expectEqual(session.ledger.backendRequests, before)
        await session.expectClean()
    }

    @Test func aNewDecisionAndAFreshMediaTokenForEveryCall() async throws {
        let session = SimulatedSession()
        await session.signIn()
        let start = session.ledger.backendRequests.count
        await session.enabler.checkAuthorization("movies-hd")
        let first = await session.collect()
        guard case .sendTrackingData(.authorizationDetection, let data) = first.first else {
            Issue.record("expected authorizationDetection tracking, got \(first)")
            return
        }
        #expect(data.count == 9 && data[0] == "true" && data[1] == "acme-cable" && data[3] == "false")
        await session.enabler.getAuthorization("movies-hd")
        let second = await session.collect()
        guard case .sendTrackingData(.authorizationDetection, let secondData) = second.first else { return }
        expectEqual(secondData[3], "false", "a decision is never reused")
        let one = try #require(token(first)), two = try #require(token(second))
        #expect(one != two, "media tokens are never cached")
        expectEqual(Array(session.ledger.backendRequests.dropFirst(start)), [.authorize, .authorize])
        await session.expectClean()
    }

    @Test func anAuthorizationIsPerResource() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.getAuthorization("news-channel")
        await session.enabler.whenIdle()
        await session.enabler.getAuthorization("movies-hd")
        _ = await session.collect()
        expectEqual(session.ledger.backendRequests.filter { $0 == .authorize }.count, 2)
        await session.expectClean()
    }

    @Test func aDecisionIsAskedForAgainAfterItsWindowEnds() async {
        let world = SimulatedWorld(
            requestors: SimulatedWorld.default.requestors,
            providers: SimulatedWorld.default.providers.map {
                var provider = $0
                provider.authorizationTTL = .seconds(3600)
                return provider
            }, users: SimulatedWorld.default.users)
        let session = SimulatedSession(world: world)
        await session.signIn()
        await session.enabler.getAuthorization("news-channel")
        _ = await session.collect()
        await session.clock.advance(by: .seconds(3600))
        await session.enabler.getAuthorization("news-channel")
        await expectEqual(session.collectIgnoringTracking().first?.name, "setToken")
        expectEqual(session.ledger.backendRequests.filter { $0 == .authorize }.count, 2)
        await session.expectClean()
    }

    @Test func anAuthorizationDenialCarriesTheMVPDsMessage() async {
        let session = SimulatedSession()
        await session.signIn("frank", password: "furnace", provider: "bluesky-tv")
        await session.enabler.getAuthorization("sports-live")
        expectCallbacks(
            await session.collectIgnoringTracking(),
            [
                .status(StatusReport(code: "Z100", level: .error, message: "Your BlueSky TV package does not include Sports Live. Call 1-800-555-0100 to upgrade.")),
                .tokenRequestFailed(
                    resource: "sports-live", errorCode: ErrorCode.userNotAuthorized,
                    errorDescription: "Your BlueSky TV package does not include Sports Live. Call 1-800-555-0100 to upgrade."),
            ])
        await session.expectClean()
    }

    @Test(arguments: [
        (SimulatedFault.fail(.network("reset by peer")), "network error: reset by peer"),
        (.fail(.timeout), "the backend timed out"),
        (.fail(.throttled(retryAfterSeconds: 30)), "throttled; retry after 30 s"),
        (.fail(.httpStatus(502, "bad gateway")), "HTTP 502: bad gateway"),
        (.answerGarbage, "malformed backend response: the answer has no decision for the resource"),
    ])
    func otherFailuresAreGenericAuthorizationErrors(fault: SimulatedFault, description: String) async {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.inject(fault, into: .authorize)
        await session.enabler.checkAuthorization("news-channel")
        // Adobe's SDK reports Z100 beside a throttled authorization.
        let z100: [Callback] = description.hasPrefix("throttled") ? [.status(StatusReport(code: "Z100", level: .error, message: description + "."))] : []
        expectCallbacks(
            await session.collectIgnoringTracking(),
            z100 + [.tokenRequestFailed(resource: "news-channel", errorCode: ErrorCode.genericAuthorization, errorDescription: description)])
        // Still authenticated: the next try works (after a 429, once the pause it asked for ends).
        await session.enabler.checkAuthorization("news-channel")
        if description.hasPrefix("throttled") {
            #expect(await session.collectIgnoringTracking().isEmpty)
            await session.clock.advance(by: .seconds(30))
        }
        await expectEqual(session.collectIgnoringTracking().first?.name, "setToken")
        await session.expectClean()
    }

    @Test func anAuthenticationErrorFromTheServerDropsTheLocalAuthentication() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.inject(.fail(.authenticationRequired("revoked")), into: .authorize)
        await session.enabler.getAuthorization("news-channel")
        expectCallbacks(
            await session.collectIgnoringTracking(),
            [
                .tokenRequestFailed(
                    resource: "news-channel", errorCode: ErrorCode.userNotAuthenticated,
                    errorDescription: "Authentication required: revoked")
            ])
        await session.enabler.checkAuthentication()
        #expect(
            session.ledger.takeIgnoringTracking()
                == [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.expectClean()
    }

    @Test func anEmptyResourceIsRefused() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.getAuthorization("")
        expectCallbacks(session.ledger.take(), [.status(CallRefusal.invalidArgument("the resource id is empty").report)])
        await session.expectClean()
    }

    @Test func getAuthorizationRunsTheLoginFirstThenContinues() async throws {
        let session = SimulatedSession()
        await session.configure()
        let get = await session.enabler.getAuthorization("sports-live")
        expectEqual(session.ledger.take().first?.name, "displayProviderDialog")
        await session.enabler.setSelectedProvider("acme-cable")
        #expect(await session.collect().lastNavigation != nil)
        let (_, handled) = await session.logIn(as: "alice", password: "wonderland")
        let callbacks = session.ledger.takeIgnoringTracking()
        expectEqual(callbacks.first, .setAuthenticationStatus(status: 1, errorCode: ""))
        #expect(callbacks.count == 2 && callbacks.last?.name == "setToken")
        expectEqual(session.ledger.answers(to: get).first?.name, "setToken")
        expectEqual(session.ledger.answers(to: try #require(handled)), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.expectClean()
    }

    @Test func cancellingTheLoginOfGetAuthorizationEndsItWithTokenRequestFailed() async {
        let session = SimulatedSession()
        await session.configure()
        let get = await session.enabler.getAuthorization("sports-live")
        await session.enabler.setSelectedProvider(nil)
        expectCallbacks(
            session.ledger.takeIgnoringTracking(),
            [
                .displayProviderDialog(
                    SimulatedWorld.default.requestor("sim-requestor")!.mvpdIDs.compactMap {
                        SimulatedWorld.default.provider($0)?.mvpd
                    }),
                .setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected),
                .tokenRequestFailed(
                    resource: "sports-live", errorCode: ErrorCode.userNotAuthenticated,
                    errorDescription: "The user cancelled the login."),
            ])
        expectEqual(session.ledger.answers(to: get).count, 1)
        await session.expectClean()
    }

    @Test func differentResourcesAreAuthorizedConcurrently() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.hold(.authorize)
        await session.enabler.getAuthorization("news-channel")
        await session.enabler.getAuthorization("movies-hd")
        await session.simulator.whenWaiting(.authorize, count: 2)  // both are in flight at once
        await session.simulator.releaseAll(.authorize)
        let tokens = await session.collectIgnoringTracking()
        expectEqual(Set(tokens.compactMap { if case .setToken(_, let resource) = $0 { resource } else { nil } }), ["news-channel", "movies-hd"])
        await session.expectClean()
    }

    @Test func withOrderedDeliveryConcurrentAnswersArriveInRequestOrderEveryTime() async {
        var transcripts: Set<[String]> = []
        for _ in 0..<10 {
            let session = SimulatedSession(deliversInOrder: true)
            await session.signIn()
            for resource in ["sports-live", "news-channel", "movies-hd", "kids-zone"] {
                await session.enabler.getAuthorization(resource)
            }
            let callbacks = await session.collectIgnoringTracking()
            expectEqual(callbacks.map(\.redactedDescription).count, 4)
            transcripts.insert(callbacks.map { "\($0)" })
            await session.expectClean()
        }
        expectEqual(transcripts.count, 1, "ordered delivery must give the same callbacks, tokens included, every run")
    }

    @Test func identicalConcurrentRequestsShareOneBackendCallAndEachGetsItsAnswer() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.hold(.authorize)
        let start = session.ledger.backendRequests.count
        let calls = [
            await session.enabler.getAuthorization("news-channel"), await session.enabler.checkAuthorization("news-channel"),
            await session.enabler.getAuthorization("news-channel"),
        ]
        await session.simulator.whenWaiting(.authorize)
        await session.simulator.releaseAll(.authorize)
        let callbacks = await session.collectIgnoringTracking()
        #expect(callbacks.count == 3 && callbacks.allSatisfy { $0.name == "setToken" })
        for call in calls { #expect(session.ledger.answers(to: call).count == 1) }
        expectEqual(Array(session.ledger.backendRequests.dropFirst(start)), [.authorize])
        await session.expectClean()
    }

    @Test func viewMediaOnlyAuthorizesProtectedMedia() async {
        // Cookbook G: the app decides what is protected; protected media goes through flow F.
        let catalog: [(title: String, resource: String?)] = [("Free trailer", nil), ("Movies HD", "movies-hd")]
        let session = SimulatedSession()
        await session.signIn()
        var played: [String] = []
        for item in catalog {
            guard let resource = item.resource else {
                played.append(item.title)
                continue
            }
            await session.enabler.checkAuthorization(resource)
            if await session.collectIgnoringTracking().first?.name == "setToken" { played.append(item.title) }
        }
        expectEqual(played, ["Free trailer", "Movies HD"])
        expectEqual(session.ledger.backendRequests.filter { $0 == .authorize }.count, 1)
        await session.expectClean()
    }

    /// After a `429` the device sends nothing for its `Retry-After` (at least 1 s, at most a minute):
    /// a request due meanwhile goes out when the pause ends, as its first attempt.
    @Test(arguments: [(3, 3), (0, 1), (3_600, 60)])
    func aThrottledDeviceWaitsRetryAfterBeforeItsNextRequest(retryAfter: Int, waited: Int64) async throws {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.inject(.fail(.throttled(retryAfterSeconds: retryAfter)), into: .authorize)
        await session.enabler.getAuthorization("news-channel")
        guard case .tokenRequestFailed("news-channel", ErrorCode.genericAuthorization, _)? = await session.collectIgnoringTracking().last else {
            Issue.record("the throttled call fails at once")
            return
        }
        let sent = session.ledger.backendRequests.count
        let next = await session.enabler.getAuthorization("sports-live")
        await expectEqual(session.collectIgnoringTracking(), [], "nothing before the pause ends")
        await session.clock.advance(by: .milliseconds(waited * 1000 - 1))
        #expect(await session.collectIgnoringTracking() == [] && session.ledger.backendRequests.count == sent)
        await session.clock.advance(by: .milliseconds(1))
        #expect(token(await session.collectIgnoringTracking()) != nil)
        #expect(session.ledger.answers(to: next).count == 1 && session.ledger.backendRequests.count == sent + 1)
        await session.expectClean()
    }
}

@Suite("Pre-authorization and metadata (basic; lifetimes and caching come with the token issue)", .checksExactlyOnce)
struct PreauthorizationAndMetadataTests {
    @Test func preauthorizedResourcesListsTheAuthorizedSubsetInTheCallersOrder() async {
        let session = SimulatedSession()
        await session.signIn("bob", password: "builder")
        await session.enabler.checkPreauthorizedResources(["movies-hd", "news-channel", "sports-live"])
        await expectEqual(session.collect(), [.preauthorizedResources(["news-channel"])])
        await session.enabler.checkPreauthorizedResources(["sports-live"], cache: false)
        await expectEqual(session.collect(), [.preauthorizedResources([])])
        await session.expectClean()
    }

    @Test func preauthorizationWithoutAuthenticationIsEmpty() async {
        let session = SimulatedSession()
        await session.configure()
        await session.enabler.checkPreauthorizedResources(["news-channel"])
        expectEqual(session.ledger.take(), [.preauthorizedResources([])])
        await session.expectClean()
    }

    @Test func aFailedPreauthorizationAnswersEmptyWithAStatus() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.simulator.inject(.fail(.timeout), into: .preauthorize)
        await session.enabler.checkPreauthorizedResources(["news-channel"])
        let callbacks = await session.collect()
        expectEqual(statusCode(callbacks.first), "P100")
        expectEqual(callbacks.last, .preauthorizedResources([]))
        await session.expectClean()
    }

    @Test func metadataAnswersEchoTheKey() async {
        let session = SimulatedSession()
        await session.configure()
        await session.enabler.getMetadata(.userMetadata("zip"))
        await session.enabler.getMetadata(.deviceID)
        #expect(
            session.ledger.take() == [
                .setMetadataStatus(nil, encrypted: false, key: .userMetadata("zip")),
                .setMetadataStatus(.text("device-1"), encrypted: false, key: .deviceID),
            ])
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        _ = session.ledger.take()
        await session.logIn(as: "alice", password: "wonderland")
        _ = session.ledger.take()
        await session.enabler.getMetadata(.userMetadata("zip"))
        await session.enabler.getMetadata(.userMetadata("householdID"))
        await session.enabler.getMetadata(.userMetadata("shoeSize"))
        await session.enabler.getMetadata(.authenticationExpiry)
        let expiry = session.clock.now().adding(.seconds(86_400)).milliseconds
        let callbacks = await session.collect()
        #expect(callbacks.contains(.setMetadataStatus(.list(["10001"]), encrypted: false, key: .userMetadata("zip"))))
        #expect(callbacks.contains(.setMetadataStatus(.text("hh-alice"), encrypted: false, key: .userMetadata("householdID"))))
        #expect(callbacks.contains(.setMetadataStatus(nil, encrypted: false, key: .userMetadata("shoeSize"))))
        #expect(callbacks.contains(.setMetadataStatus(.text(String(expiry)), encrypted: false, key: .authenticationExpiry)))
        expectEqual(callbacks.count, 4)
        await session.expectClean()
    }
}
