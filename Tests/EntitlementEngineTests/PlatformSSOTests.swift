import EntitlementEngine
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

@Suite("D. platform SSO picker, and I. logout of a platform session", .checksExactlyOnce)
struct PlatformSSOTests {
    static let acme = MVPD(id: "acme-cable", displayName: "Acme Cable", logoURL: "https://login.acme-cable.sim/logo.png", enablePlatformServices: true)
    static let bluesky = MVPD(id: "bluesky-tv", displayName: "BlueSky TV", logoURL: "https://login.bluesky-tv.sim/logo.png", enablePlatformServices: true)
    static let picker = TvProviderDialog(id: "tv-provider-1", mvpds: [acme, bluesky])
    static let authenticated = Callback.setAuthenticationStatus(status: 1, errorCode: "")

    func status(_ code: String, _ message: String) -> Callback {
        .status(StatusReport(code: code, level: .info, message: message))
    }

    @Test func signingInWithThePlatformAuthenticatesWithoutAWebView() async throws {
        let session = SimulatedSession(platformSSO: true)
        let platform = try #require(session.platform)
        await session.configure()
        platform.script(.signIn(username: "alice"))
        let call = await session.enabler.getAuthentication()
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(callbacks, [.presentTvProviderDialog(Self.picker), Self.authenticated])
        #expect(callbacks.lastNavigation == nil, "no web view in cookbook D")
        expectEqual(session.ledger.answers(to: call), [Self.authenticated])
        expectEqual(platform.presentedDialogs, [Self.picker], "only SSO-capable MVPDs are offered")
        // The platform was asked twice — silently at setRequestor, then with its picker — each time with a
        // partner request of its own, which its signed answer answers.
        #expect(platform.requests.map(\.type) == ["saml", "saml"] && Set(platform.requests).count == 2)
        let token = try #require(await session.enabler.machineSnapshot.storedTokens.authentication)
        #expect(token.source == .platformSSO && token.mvpdID == "acme-cable")
        // The engine's own token works like any other: authorize and get a media token.
        await session.enabler.getAuthorization("news-channel")
        await expectEqual(session.collectIgnoringTracking().map(\.name), ["setToken"])
        await session.expectClean()
    }

    @Test func otherProvidersFallsBackToTheClassicDialog() async throws {
        let session = SimulatedSession(platformSSO: true)
        try #require(session.platform).script(.otherProviders)
        await session.configure()
        let call = await session.enabler.getAuthentication()
        let world = SimulatedWorld.default
        let mvpds = try #require(world.requestor("sim-requestor")).mvpdIDs.compactMap { world.provider($0)?.mvpd }
        #expect(await session.collectIgnoringTracking() == [
            .presentTvProviderDialog(Self.picker), .dismissTvProviderDialog(Self.picker),
            status("N003", "The user chose another TV provider in the platform picker."),
            .displayProviderDialog(mvpds),
        ])
        // The classic flow (C) continues from here and answers the original call.
        await session.enabler.setSelectedProvider("coastal-fiber")
        _ = await session.collect()
        _ = await session.logIn(as: "dave", password: "diving")
        await expectEqual(session.collectIgnoringTracking(), [Self.authenticated])
        expectEqual(session.ledger.answers(to: call), [Self.authenticated])
        await expectEqual(session.enabler.machineSnapshot.storedTokens.authentication?.source, .mvpdLogin)
        await session.expectClean()
    }

    @Test func anUnsupportedProviderFallsBackWithN004() async throws {
        let session = SimulatedSession(platformSSO: true)
        try #require(session.platform).script(.choose(mvpdID: "delta-satellite"))
        await session.configure()
        let call = await session.enabler.getAuthentication()
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(callbacks.map(\.name), ["presentTvProviderDialog", "dismissTvProviderDialog", "status", "displayProviderDialog"])
        expectEqual(statusCode(callbacks[2]), "N004")
        await expectEqual(session.enabler.machineSnapshot.authentication.kind, .selectingProvider)
        await session.expectClean(pending: [call])
    }

    @Test func cancellingThePickerEndsTheLoginAndANewOneStarts() async throws {
        let session = SimulatedSession(platformSSO: true)
        let platform = try #require(session.platform)
        platform.script(.cancel)
        await session.configure()
        let call = await session.enabler.getAuthentication()
        let ended = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected)
        #expect(await session.collectIgnoringTracking() == [
            .presentTvProviderDialog(Self.picker), .dismissTvProviderDialog(Self.picker),
            status("N005", "The user cancelled the platform picker."), ended,
        ])
        expectEqual(session.ledger.answers(to: call), [ended])
        platform.script(.signIn(username: "carol"))
        await session.enabler.getAuthentication()
        let again = await session.collectIgnoringTracking()
        expectEqual(again.last, Self.authenticated)
        expectEqual(again.first?.name, "presentTvProviderDialog")
        await session.expectClean()
    }

    @Test(arguments: ["forged", "expired", "other device", "answering no request"])
    func aBadAssertionIsRefusedByTheBackendAndNothingIsStored(_ kind: String) async throws {
        let session = SimulatedSession(platformSSO: true)
        let platform = try #require(session.platform)
        // A request the service issued to this device: each assertion below is bad for one reason only.
        let issued = try await session.simulator.partnerSession(
            RequestContext(requestorID: "sim-requestor", deviceID: "device-1"), partner: "Apple", domainName: "app.example",
            redirectURL: "app://done")
        let request = try #require(issued.authenticationRequest)
        let genuine = try #require(await session.simulator.platformAssertion(username: "alice", deviceID: "device-1", answering: request))
        switch kind {
        case "forged":
            platform.script(.present(PlatformAssertion(mvpdID: "acme-cable", serialized: genuine.serialized.dropLast(2) + "AA")))
        case "expired":
            platform.script(.present(genuine))
            await session.clock.advance(by: .seconds(301))
        case "other device":
            let other = try #require(
                await session.simulator.platformAssertion(username: "alice", deviceID: "device-2", answering: request))
            platform.script(.present(other))
        default:
            let unbound = try #require(await session.simulator.platformAssertion(username: "alice", deviceID: "device-1", answering: nil))
            platform.script(.present(unbound))
        }
        await session.configure()
        let call = await session.enabler.getAuthentication()
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(callbacks.first, .presentTvProviderDialog(Self.picker))
        expectEqual(statusCode(callbacks.dropFirst().first), "LOGIN_FAILED")
        if case .status(let report)? = callbacks.dropFirst().first {
            #expect(report.message.hasPrefix("The platform sign-in failed: "), "\(report.message)")
        }
        let failed = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication)
        #expect(callbacks.last == failed && session.ledger.answers(to: call) == [failed])
        #expect(try await session.storage.tokens(deviceID: "device-1", requestorID: "sim-requestor").authentication == nil)
        await session.expectClean()
    }

    @Test func loggingOutOfAPlatformSessionReportsVSA203() async throws {
        let session = SimulatedSession(platformSSO: true)
        let platform = try #require(session.platform)
        platform.script(.signIn(username: "alice"))
        await session.configure()
        await session.enabler.getAuthentication()
        _ = await session.collect()
        let logout = await session.enabler.logout()
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(statusCode(callbacks.first), "VSA203")
        // The service answers `partner_logout`: no page to open, the logout completes at once.
        let done = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)
        expectEqual(Array(callbacks.dropFirst()), [done])
        // Nothing but the logout's mark, which ends a sign-in another node may be completing through its picker.
        let stored = try await session.storage.tokens(deviceID: "device-1", requestorID: "sim-requestor")
        #expect(stored.loggedOut != nil, "\(stored)")
        var unmarked = stored
        unmarked.loggedOut = nil
        unmarked.deviceID = nil
        expectEqual(unmarked, .empty)
        expectEqual(session.ledger.answers(to: logout), [done])
        expectEqual(platform.signedInUser, "alice", "the platform account stays signed in (cookbook I)")
        await session.expectClean()
    }

    @Test(arguments: ["cancel", "choose"])
    func closingAnOpenPickerStopsWaitingForIt(_ how: String) async throws {
        let session = SimulatedSession(platformSSO: true)
        let platform = try #require(session.platform)
        await session.configure()
        platform.script(.wait)
        let call = await session.enabler.getAuthentication()
        // The partner's request comes in, then the picker opens (and stays open: nothing to settle on).
        for _ in 0..<5_000 where platform.presentedDialogs.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
        try #require(platform.presentedDialogs.count == 1)
        // The picker is open: the user has not answered, so nothing may wait for the engine here.
        let close = how == "cancel"
            ? await session.enabler.setSelectedProvider(nil) : await session.enabler.setSelectedProvider("coastal-fiber")
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(Array(callbacks.prefix(2)), [.presentTvProviderDialog(Self.picker), .dismissTvProviderDialog(Self.picker)])
        for _ in 0..<1_000 where platform.holdsPicker { await Task.yield() }
        #expect(!platform.holdsPicker, "the engine's dismissal cancelled the platform's picker")
        if close == call { Issue.record("one call id for two calls") }
        if how == "cancel" {
            let ended = Callback.setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected)
            expectEqual(Array(callbacks.dropFirst(2)), [ended])
            #expect(session.ledger.answers(to: call) == [ended] && session.ledger.answers(to: close) == [ended])
        } else {
            expectEqual(callbacks.last?.name, "navigateToUrl")
            _ = await session.logIn(as: "dave", password: "diving")
            let done = Callback.setAuthenticationStatus(status: 1, errorCode: "")
            await expectEqual(session.collectIgnoringTracking(), [done])
            #expect(session.ledger.answers(to: call) == [done] && session.ledger.answers(to: close) == [done])
        }
        await session.expectClean()
    }

    @Test func withoutAPlatformTheClassicDialogIsShown() async throws {
        let session = SimulatedSession()
        await session.configure()
        let call = await session.enabler.getAuthentication()
        await expectEqual(session.collectIgnoringTracking().map(\.name), ["displayProviderDialog"])
        await session.expectClean(pending: [call])
    }

    @Test func aPickerAnswerAfterTheLoginEndedIsIgnored() {
        var settings = EngineSettings()
        settings.platformSSO = true
        var machine = EntitlementMachine(settings: settings, deviceID: "d")
        let now = Timestamp(milliseconds: 0)
        let configuration = RequestorConfiguration(requestorID: "r", mvpds: [Self.acme])
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "r", serviceProviders: [])), at: now)
        let context = RequestContext(requestorID: "r", deviceID: "d")
        let partnerSession = BackendRequest.partnerSession(
            context, partner: "Apple", domainName: settings.domainName, redirectURL: settings.redirectURL)
        let request = V2PartnerRequest(type: "saml", request: "PHJlcS8+", attributeNames: ["userID"])
        let answer = BackendResponse.session(
            V2Session(actionName: .partnerProfile, actionType: .direct, reasonType: .none, sessionID: "s", serviceProvider: "r",
                authenticationRequest: request))
        // The partner's request first (at setRequestor and before the picker), then the platform, answering it.
        let asked = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, .empty), at: now).effects.apartFromDeadlines
        expectEqual(asked, [.callBackend(OperationID(2, owner: .configuration), partnerSession)])
        let check = machine.handle(.backendAnswered(OperationID(2, owner: .configuration), answer), at: now).effects.apartFromDeadlines
        expectEqual(check, [.checkPlatformSignIn(OperationID(3, owner: .configuration), requestorID: "r", mvpdIDs: ["acme-cable"], request: request)])
        _ = machine.handle(.platformSignInChecked(OperationID(3, owner: .configuration), nil), at: now)
        let requested = machine.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: now).effects.apartFromDeadlines
        expectEqual(requested, [.callBackend(OperationID(4, owner: .authentication), partnerSession)])
        let opened = machine.handle(.backendAnswered(OperationID(4, owner: .authentication), answer), at: now).effects.apartFromDeadlines
        let dialog = TvProviderDialog(id: "tv-provider-1", mvpds: [Self.acme])
        #expect(opened == [
            .emit(.presentTvProviderDialog(dialog), answering: []),
            .presentPlatformPicker(FlowID(1), dialog, requestorID: "r", request: request),
        ])
        let cancelled = machine.handle(.callReceived(CallID(3), .setSelectedProvider(nil)), at: now).effects.apartFromDeadlines
        #expect(cancelled.contains(.dismissPlatformPicker(FlowID(1))))
        #expect(cancelled.contains(.emit(.dismissTvProviderDialog(dialog), answering: [])))
        let late = machine.handle(
            .platformPickerAnswered(FlowID(1), .signedIn(PlatformAssertion(mvpdID: "acme-cable", serialized: "vsa.x.y"))), at: now).effects.apartFromDeadlines
        expectEqual(late, [.log(.latePickerAnswerIgnored(FlowID(1)))])
        expectEqual(machine.authentication, .unauthenticated)
    }

    @Test func aPendingLoginSavedByAnEarlierVersionIsDroppedAndTheRestKept() throws {
        let json = #"{"selectedProvider":"acme","deviceID":"dev","pendingLogin":{"mvpdID":"acme","state":"S","verifier":"V","deadline":{"milliseconds":5},"data":{}}}"#
        let tokens = try JSONDecoder().decode(StoredTokens.self, from: Data(json.utf8))
        expectEqual(tokens, StoredTokens(selectedProvider: "acme", deviceID: "dev"))
    }

    @Test func aTokenStoredByAnEarlierVersionReadsAsAnMVPDLoginWithoutMetadata() throws {
        let json = #"{"value":"v","mvpdID":"m","requestorID":"r","userID":"u","expires":{"milliseconds":5}}"#
        let token = try JSONDecoder().decode(AuthenticationToken.self, from: Data(json.utf8))
        #expect(token.source == .mvpdLogin && token.expires == Timestamp(milliseconds: 5))
        #expect(token.metadata.isEmpty && token.sessionID == nil)
        let platform = AuthenticationToken(
            mvpdID: "m", requestorID: "r", userID: "u", expires: token.expires, source: .platformSSO, metadata: ["zip": .list(["1"])],
            encryptedMetadata: ["zip"], sessionID: "sid")
        try expectEqual(JSONDecoder().decode(AuthenticationToken.self, from: JSONEncoder().encode(platform)), platform)
    }
}
