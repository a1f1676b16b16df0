import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// `SessionHost.interact`: one call per device request, answered with the first thing the device must
/// do (a page, a provider choice, a registration code) or the call's answer — with a time limit, no
/// answer of an earlier request crossing into a later one, and a device's requests on any node.
@Suite("The host's request/response face")
struct SessionHostInteractionTests {
    static let requestor = "sim-requestor"
    static let key = SessionKey(deviceID: "device-1", requestorID: requestor)

    static func mvpds() -> [MVPD] {
        SimulatedWorld.default.requestor(requestor)!.mvpdIDs.compactMap { SimulatedWorld.default.provider($0)?.mvpd }
    }

    /// A host on `rig` whose engines use `engine` settings.
    static func host(_ rig: Rig, engine: EngineSettings = .simulated) -> SessionHost {
        let clock = rig.clock
        return SessionHost(
            settings: SessionHostSettings(providerChoiceTimeout: nil, engine: engine), backend: rig.simulator.backend, storage: rig.storage,
            clock: clock, delegate: rig.delegate, environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
    }

    @Test func aLoginIsAPickerThenAPageThenTheAnswer() async throws {
        let rig = Rig()
        let host = Self.host(rig)
        try await expectEqual(host.interact(.checkAuthentication, on: Self.key), .answered(.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)))
        try await expectEqual(host.interact(.getAuthentication(forceAuthn: false, data: [:]), on: Self.key), .chooseProvider(Self.mvpds()))
        guard case .openPage(let url) = try await host.interact(.setSelectedProvider("acme-cable"), on: Self.key) else {
            Issue.record("the login page")
            return
        }
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        let redirect = try #require(visit.appURL)
        try await expectEqual(host.interact(.handleExternalURL(redirect), on: Self.key), .answered(.setAuthenticationStatus(status: 1, errorCode: "")))
        guard case .answered(.setToken(_, "news-channel")) = try await host.interact(.getAuthorization(resource: "news-channel", data: [:]), on: Self.key) else {
            Issue.record("a token once signed in")
            return
        }
    }

    @Test func aTVGetsItsRegistrationCode() async throws {
        let rig = Rig()
        var engine = EngineSettings.simulated
        engine.secondScreen = SecondScreen(pollInterval: .seconds(5), codeLifetime: .seconds(1800))
        let host = Self.host(rig, engine: engine)
        guard case .showRegistrationCode(let code) = try await host.interact(.setSelectedProvider("acme-cable"), on: Self.key) else {
            Issue.record("a registration code")
            return
        }
        expectEqual(code.count, 8)
    }

    /// A device that lost what it was shown (its app restarted, the response never reached it) asks again
    /// and is shown it again: the provider choice, then the registration code — also through another node,
    /// which shows the code on the screen rather than a picker whose choice would kill it.
    @Test func askedAgainTheDeviceIsShownTheChoiceOrTheCodeAgain() async throws {
        let rig = Rig()
        var engine = EngineSettings.simulated
        engine.secondScreen = SecondScreen(pollInterval: .seconds(5), codeLifetime: .seconds(1800))
        let nodeA = Self.host(rig, engine: engine)
        let nodeB = Self.host(rig, engine: engine)
        let getAuthentication = EntitlementCall.getAuthentication(forceAuthn: false, data: [:])
        try await expectEqual(nodeA.interact(getAuthentication, on: Self.key), .chooseProvider(Self.mvpds()))
        try await expectEqual(nodeA.interact(getAuthentication, on: Self.key), .chooseProvider(Self.mvpds()), "the same choice again")
        guard case .showRegistrationCode(let code) = try await nodeA.interact(.setSelectedProvider("acme-cable"), on: Self.key) else {
            Issue.record("a registration code")
            return
        }
        try await expectEqual(nodeA.interact(getAuthentication, on: Self.key), .showRegistrationCode(code), "the same code again")
        try await expectEqual(nodeB.interact(getAuthentication, on: Self.key), .showRegistrationCode(code), "node B shows node A's code")
        let visit = await rig.simulator.userAgent.activate(code: code, username: "alice", password: "wonderland")
        guard case .stoppedAt(let page) = visit.outcome, page.title == "Signed in" else {
            Issue.record("the code was taken: \(visit.outcome)")
            return
        }
        await rig.clock.advance(by: .seconds(5))
        await nodeA.whenSettled(Self.key)
        await nodeB.whenSettled(Self.key)
        try await expectEqual(nodeB.interact(.checkAuthentication, on: Self.key), .answered(.setAuthenticationStatus(status: 1, errorCode: "")))
        try await expectEqual(nodeA.interact(.checkAuthentication, on: Self.key), .answered(.setAuthenticationStatus(status: 1, errorCode: "")))
    }

    /// The user enters the TV's code on the phone before any node polls it (the node showing it died, or its
    /// poll is not due): the node the device asks next reads the code before it shows it, so the request is
    /// answered signed in — never with the used code, which the activation page refuses.
    @Test func aCodeEnteredBeforeAnyPollAnswersTheNextRequestSignedIn() async throws {
        let rig = Rig()
        var engine = EngineSettings.simulated
        engine.secondScreen = SecondScreen(pollInterval: .seconds(5), codeLifetime: .seconds(1800))
        let nodeA = Self.host(rig, engine: engine)
        let nodeB = Self.host(rig, engine: engine)
        guard case .showRegistrationCode(let code) = try await nodeA.interact(.setSelectedProvider("acme-cable"), on: Self.key) else {
            Issue.record("a registration code")
            return
        }
        let visit = await rig.simulator.userAgent.activate(code: code, username: "alice", password: "wonderland")
        guard case .stoppedAt(let page) = visit.outcome, page.title == "Signed in" else {
            Issue.record("the code was taken: \(visit.outcome)")
            return
        }
        let getAuthentication = EntitlementCall.getAuthentication(forceAuthn: false, data: [:])
        try await expectEqual(nodeB.interact(getAuthentication, on: Self.key), .answered(.setAuthenticationStatus(status: 1, errorCode: "")))
        try await expectEqual(nodeA.interact(getAuthentication, on: Self.key), .answered(.setAuthenticationStatus(status: 1, errorCode: "")))
    }

    /// Two requests of one device waiting together both get the need; an authorization asked while the
    /// login waits for its redirect is shown the page again, and its own answer comes when the login
    /// ends — never as another request's.
    @Test func aSecondRequestWhileTheFirstWaitsGetsTheNeedOrItsOwnAnswer() async throws {
        let rig = Rig()
        let host = Self.host(rig)
        async let first = host.interact(.getAuthorization(resource: "news-channel", data: [:]), on: Self.key)
        async let second = host.interact(.getAuthentication(forceAuthn: false, data: [:]), on: Self.key)
        let (a, b) = try await (first, second)
        #expect(a == .chooseProvider(Self.mvpds()) && b == .chooseProvider(Self.mvpds()), "\(a) \(b)")
        guard case .openPage(let url) = try await host.interact(.setSelectedProvider("acme-cable"), on: Self.key) else {
            Issue.record("the login page")
            return
        }
        // Joins the login waiting for its redirect: the device is shown the same page again (the login's
        // profile read first), and the authorization's answer comes when the login ends.
        try await expectEqual(host.interact(.getAuthorization(resource: "sports-live", data: [:]), on: Self.key), .openPage(url))
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        let redirect = try #require(visit.appURL)
        try await expectEqual(host.interact(.handleExternalURL(redirect), on: Self.key), .answered(.setAuthenticationStatus(status: 1, errorCode: "")))
        await host.whenSettled(Self.key)
        let tokens = rig.delegate.answers(of: Self.key).filter { if case .setToken(_, "sports-live") = $0.callback { true } else { false } }
        expectEqual(tokens.count, 1, "the joined authorization's own token, once")
    }

    @Test func aTimeLimitEndsTheWaitNotTheCall() async throws {
        let rig = Rig()
        let host = Self.host(rig)
        _ = try await host.interact(.getAuthentication(forceAuthn: false, data: [:]), on: Self.key)
        _ = try await host.interact(.setSelectedProvider("acme-cable"), on: Self.key)
        // Joins the login waiting for its redirect while its profile cannot be read: the page it shows
        // again waits for that read, and the time limit comes first.
        await rig.simulator.hold(.profileByCode)
        let ended = Mutex<(any Error)?>(nil)
        let answered = Mutex<Interaction?>(nil)
        let waiting = Task {
            do {
                let interaction = try await host.interact(.getAuthorization(resource: "news-channel", data: [:]), on: Self.key, within: .seconds(5))
                answered.withLock { $0 = interaction }
            } catch {
                ended.withLock { $0 = error }
            }
        }
        // The engine's clock moves a second at a time until the wait ends (the login's own deadline is minutes away).
        for _ in 0..<600 where ended.withLock({ $0 == nil }) && answered.withLock({ $0 == nil }) {
            await rig.clock.advance(by: .seconds(1))
            try await Task.sleep(for: .milliseconds(5))
        }
        await waiting.value
        #expect(answered.withLock { $0 } == nil)
        expectEqual((ended.withLock { $0 } as? EntitlementFailure)?.code, ErrorCode.callWaitTimedOut, "\(String(describing: ended.withLock { $0 }))")
        expectEqual(host.residency(of: Self.key), .resident, "the login still waits for its redirect")
        await rig.simulator.releaseAll(.profileByCode)
        await host.whenSettled(Self.key)
        // Asked again, the login shows its page again.
        guard case .openPage = try await host.interact(.getAuthentication(forceAuthn: false, data: [:]), on: Self.key) else {
            Issue.record("getAuthentication during the login shows its page again")
            return
        }
    }

    /// The device's next request reaches another node of the fleet: the redirect finishes the login
    /// there, and that node's answers are the device's.
    @Test func theNextRequestOnAnotherNode() async throws {
        let rig = Rig()
        let nodeA = Self.host(rig)
        let nodeB = Self.host(rig)
        _ = try await nodeA.interact(.getAuthentication(forceAuthn: false, data: [:]), on: Self.key)
        guard case .openPage(let url) = try await nodeA.interact(.setSelectedProvider("acme-cable"), on: Self.key) else {
            Issue.record("the login page")
            return
        }
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        let redirect = try #require(visit.appURL)
        try await expectEqual(nodeB.interact(.handleExternalURL(redirect), on: Self.key), .answered(.setAuthenticationStatus(status: 1, errorCode: "")))
        guard case .answered(.setToken(_, "news-channel")) = try await nodeB.interact(.getAuthorization(resource: "news-channel", data: [:]), on: Self.key) else {
            Issue.record("node B authorizes the device node A started")
            return
        }
    }

    /// The production checklist's device route, compiled here: its block is this code, line for line.
    static func checklistRoute(host: SessionHost, requestorID: String) -> (String, EntitlementCall) async -> (status: Int, body: String) {
        // CHECKLIST-ROUTE-BEGIN
        // POST /devices/{device}/calls — your HTTP framework's route, on any node:
        struct Reply: Encodable {
            struct Provider: Encodable { var id: String, name: String }
            var open: String?, choose: [Provider]?, code: String?, token: String?, resource: String?, answer: String?
        }

        func deviceRequest(device: String, call: EntitlementCall) async -> (status: Int, body: String) {
            let key = SessionKey(deviceID: device, requestorID: requestorID)
            var reply = Reply()
            do {
                switch try await host.interact(call, on: key, within: .seconds(25)) {
                case .openPage(let url): reply.open = url
                case .chooseProvider(let mvpds): reply.choose = mvpds.map { Reply.Provider(id: $0.id, name: $0.displayName) }
                case .showRegistrationCode(let code): reply.code = code
                case .answered(.setToken(let token, let resource)): (reply.token, reply.resource) = (token, resource)
                case .answered(let callback): reply.answer = callback.redactedDescription
                }
            } catch is SessionHostError {
                return (503, #"{"retry":true}"#)  // the host refused: shutting down, or the device's mailbox is full
            } catch {
                return (504, #"{"retry":true}"#)  // the wait ended; the call goes on — ask again
            }
            let json = JSONEncoder()
            json.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (200, String(decoding: (try? json.encode(reply)) ?? Data("{}".utf8), as: UTF8.self))
        }
        // CHECKLIST-ROUTE-END
        return deviceRequest
    }

    @Test func theChecklistsRouteIsThisCodeAndServesALogin() async throws {
        let block = try ChecklistBlock(opening: "// POST /devices/{device}/calls", marker: "CHECKLIST-ROUTE", in: #filePath)
        expectEqual(block.tested, block.documented)

        let rig = Rig()
        let route = Self.checklistRoute(host: Self.host(rig), requestorID: Self.requestor)
        #expect(await route("device-7", .getAuthentication(forceAuthn: false, data: [:])).body.hasPrefix(#"{"choose":[{"id":"acme-cable""#))
        let page = await route("device-7", .setSelectedProvider("acme-cable"))
        let url = try #require(try JSONReader.read(Array(page.body.utf8))["open"]?.string, "\(page)")
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        await expectEqual(route("device-7", .handleExternalURL(try #require(visit.appURL))).body, #"{"answer":"setAuthenticationStatus(1, \"\")"}"#)
        let token = await route("device-7", .getAuthorization(resource: "news-channel", data: [:]))
        try expectEqual(JSONReader.read(Array(token.body.utf8))["resource"]?.string, "news-channel", "\(token)")
    }
}
