import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

/// Adobe adds values to REST API V2's enumerations over time. Every enumerated field the engine reads
/// is fed a value it has never seen, through the whole engine on the V2 wire: the answer still reads,
/// and the flow goes on or ends with the typed status its type documents — never a decoding failure.
@Suite("Values Adobe may add: every enumerated field read from the wire, unknown", .checksExactlyOnce)
struct UnknownWireValuesTests {
    static let novel = "adobe_added_this_later"

    /// A session whose V2 service answers `operations` with every `key` in the body set to `value`.
    static func session(rewriting key: String, in operations: Set<String>, to value: String = novel) -> SimulatedSession {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: SimulatedSession.defaultSeed &+ 100)
        let transport = RewritingTransport(
            inner: SimulatedV2Service(simulator: simulator, throttles: false), operations: operations, key: key, value: .string(value))
        let client = V2Client(
            transport: transport, softwareStatement: SimulatedClientRegistrar.softwareStatement,
            baseURL: SimulatedWorld.default.serviceProvider, clock: clock)
        return SimulatedSession(clock: clock, simulator: simulator, backend: client)
    }

    /// Logs in through the picker, the MVPD page and the redirect; returns what the app was told.
    static func logIn(_ session: SimulatedSession, as user: (String, String) = ("alice", "wonderland")) async -> [Callback] {
        await session.configure()
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        await session.logIn(as: user.0, password: user.1)
        return await session.collectIgnoringTracking()
    }

    static let profileReads: Set<String> = ["profile", "profiles", "profileByCode"]

    @Test func theDecodersKeepAnUnknownValueAsSentAndWriteItBack() throws {
        let session = V2Session(actionName: .init(rawValue: Self.novel), actionType: .init(rawValue: "x"), reasonType: .init(rawValue: "y"), sessionID: "s", serviceProvider: "sp")
        let read = try V2Session(json: session.json)
        #expect(read.actionName == .other(Self.novel) && read.actionType == .other("x") && read.reasonType == .other("y"))
        #expect(read == session && !read.actionName.isKnown && read.actionName.description == Self.novel)
        expectEqual(V2Session.ActionName(rawValue: "authenticate"), .authenticate, "a known spelling is the known case")
        for known in V2Session.ActionName.known + [V2Session.ActionName.other("x")] {
            expectEqual(V2Session.ActionName(rawValue: known.rawValue), known)
        }
        let logout = try V2Logout.logouts(json: V2Logout.json(logouts: ["m": V2Logout(actionName: .other("a"), actionType: .other("b"), mvpd: "m")]))
        #expect(logout["m"]?.actionName == .other("a") && logout["m"]?.actionType == .other("b"))
        for known in V2Logout.ActionName.known { #expect(V2Logout.ActionName(rawValue: known.rawValue) == known) }
        for known in V2Logout.ActionType.known { #expect(V2Logout.ActionType(rawValue: known.rawValue) == known) }
        for known in V2Profile.Kind.known { #expect(V2Profile.Kind(rawValue: known.rawValue) == known) }
        for known in V2Decision.Source.known { #expect(V2Decision.Source(rawValue: known.rawValue) == known) }
        for known in V2EnhancedError.Action.known { #expect(V2EnhancedError.Action(rawValue: known.rawValue) == known) }
    }

    @Test func aSessionActionUnknownEndsTheLoginWithStatusZeroNamingItAndOpensNoPage() async {
        let session = Self.session(rewriting: "actionName", in: ["createSession"])
        await session.configure()
        let get = await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        let callbacks = await session.collectIgnoringTracking()
        #expect(callbacks.lastNavigation == nil, "no page for an action the engine does not know")
        let messages = callbacks.compactMap { callback -> String? in if case .status(let report) = callback { report.message } else { nil } }
        #expect(messages.contains { $0.contains("'\(Self.novel)', which this engine does not know") }, "\(messages)")
        guard case .setAuthenticationStatus(0, let code)? = callbacks.last else {
            Issue.record("expected status 0, got \(callbacks)")
            return
        }
        expectEqual(code, ErrorCode.genericAuthentication)
        expectEqual(session.ledger.answers(to: get).count, 1)
        await session.expectClean()
    }

    @Test(arguments: ["actionType", "reasonType"])
    func aSessionsWayOrReasonUnknownChangesNothing(key: String) async {
        let session = Self.session(rewriting: key, in: ["createSession"])
        await expectEqual(Self.logIn(session).last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await session.expectClean()
    }

    @Test func aProfileTypeUnknownIsARegularLogin() async {
        let session = Self.session(rewriting: "type", in: Self.profileReads)
        await expectEqual(Self.logIn(session).last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await session.enabler.getAuthorization("news-channel")
        guard case .setToken(_, "news-channel")? = await session.collectIgnoringTracking().last else {
            Issue.record("a regular login is authorized")
            return
        }
        await session.expectClean()
    }

    @Test func anAttributeStateUnknownIsReadAsEncrypted() async {
        let session = Self.session(rewriting: "state", in: Self.profileReads)
        await expectEqual(Self.logIn(session).last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await session.enabler.getMetadata(.userMetadata("zip"))
        let callbacks = await session.collectIgnoringTracking()
        guard case .setMetadataStatus(_, let encrypted, _)? = callbacks.last else {
            Issue.record("expected metadata, got \(callbacks)")
            return
        }
        #expect(encrypted, "a value of unknown form is never shown as plain text")
        await session.expectClean()
    }

    @Test func aDecisionSourceUnknownHandsTheTokenOut() async {
        let session = Self.session(rewriting: "source", in: ["authorize"])
        await expectEqual(Self.logIn(session).last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await session.enabler.getAuthorization("news-channel")
        let callbacks = await session.collectIgnoringTracking()
        guard case .setToken(_, "news-channel")? = callbacks.last, callbacks.count == 1 else {
            Issue.record("expected one setToken and no degraded or TempPass status, got \(callbacks)")
            return
        }
        await session.expectClean()
    }

    @Test func anErrorActionUnknownStillReportsADenialAsADenial() async {
        let session = Self.session(rewriting: "action", in: ["authorize"])
        await expectEqual(Self.logIn(session, as: ("bob", "builder")).last, .setAuthenticationStatus(status: 1, errorCode: ""))
        await session.enabler.getAuthorization("sports-live")
        let callbacks = await session.collectIgnoringTracking()
        guard case .tokenRequestFailed("sports-live", let code, _)? = callbacks.last else {
            Issue.record("expected a failed token request, got \(callbacks)")
            return
        }
        expectEqual(code, ErrorCode.userNotAuthorized)
        await session.expectClean()
    }

    @Test(arguments: ["actionName", "actionType"])
    func aLogoutActionOrWayUnknownLogsOutWithoutAPage(key: String) async {
        let session = Self.session(rewriting: key, in: ["logout"])
        await expectEqual(Self.logIn(session).last, .setAuthenticationStatus(status: 1, errorCode: ""))
        let logout = await session.enabler.logout()
        let callbacks = await session.collectIgnoringTracking()
        #expect(callbacks.lastNavigation == nil, "no logout page for a value the engine does not know")
        expectEqual(session.ledger.answers(to: logout), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.enabler.checkAuthentication()
        await expectEqual(session.collectIgnoringTracking().last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        await session.expectClean()
    }
}

/// Answers `operations` with every member named `key` in the body, at any depth, set to `value`.
struct RewritingTransport: V2Transport {
    let inner: any V2Transport
    let operations: Set<String>
    let key: String
    let value: JSONValue

    func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
        var answer = try await inner.send(request, context: context)
        if operations.contains(request.operation), let body = answer.body { answer.body = rewrite(body) }
        return answer
    }

    private func rewrite(_ json: JSONValue) -> JSONValue {
        switch json {
        case .object(let members):
            .object(Dictionary(uniqueKeysWithValues: members.map { ($0.key, $0.key == key ? value : rewrite($0.value)) }))
        case .array(let items): .array(items.map(rewrite))
        default: json
        }
    }
}
