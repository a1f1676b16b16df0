import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import EntitlementTestSupport
import Foundation
import Testing

/// Per-session redirect URLs: the return page finds its session from the URL alone, on any node.
@Suite("Session redirect URLs")
struct SessionRedirectTests {
    static let key = Array("a fleet's own 32-byte redirect key!".utf8)
    static let page = "https://tv.example.com/adobe/return"

    @Test func aSessionsURLOpensToItAndSaysNothingOfIt() throws {
        let redirect = try SessionRedirect(page: Self.page, key: Self.key)
        let tv = SessionKey(deviceID: "living-room-tv-7731", requestorID: "sim-requestor")
        let url = redirect.url(for: tv)
        #expect(url.hasPrefix(Self.page + "?session="))
        #expect(!url.contains("living-room") && !url.contains("7731") && !url.contains("sim-requestor"), "\(url)")
        expectEqual(redirect.url(for: tv), url, "every node and engine makes the same URL")
        try expectEqual(SessionRedirect(page: Self.page, key: Self.key).url(for: tv), url)
        expectEqual(redirect.session(returningTo: url), tv)
        expectEqual(redirect.session(returningTo: url + "&state=abc&mvpd=acme-cable"), tv, "with the login's parameters after it")
        let other = SessionKey(deviceID: "living-room-tv-7732", requestorID: "sim-requestor")
        #expect(redirect.url(for: other) != url)
        expectEqual(redirect.session(returningTo: redirect.url(for: other)), other)
    }

    /// Ids holding the separator (U+001F) or starting with NUL: every session keeps a URL of its own,
    /// which opens to it; ordinary ids keep the URLs they had.
    @Test func idsHoldingTheSeparatorStillGetURLsOfTheirOwn() throws {
        let redirect = try SessionRedirect(page: Self.page, key: Self.key)
        let sessions = [
            SessionKey(deviceID: "a\u{1F}b", requestorID: "c"), SessionKey(deviceID: "a", requestorID: "b\u{1F}c"),
            SessionKey(deviceID: "a\u{1F}", requestorID: "b\u{1F}c"), SessionKey(deviceID: "\u{0}tv", requestorID: "r"),
            SessionKey(deviceID: "\u{1F}", requestorID: ""), SessionKey(deviceID: "", requestorID: "\u{1F}"),
        ]
        let urls = sessions.map(redirect.url(for:))
        expectEqual(Set(urls).count, sessions.count, "\(urls)")
        for (session, url) in zip(sessions, urls) { #expect(redirect.session(returningTo: url) == session) }
        let ordinary = SessionKey(deviceID: "tv-1", requestorID: "sim-requestor")
        expectEqual(SessionRedirect.plain(ordinary), Array("tv-1\u{1F}sim-requestor".utf8), "the form 0.9 sealed")
        #expect(SessionRedirect.session(in: [0, 0, 0, 0, 9, 65]) == nil, "a length past the end opens to nothing")
    }

    @Test func aChangedMadeUpOrForeignURLOpensToNothing() throws {
        let redirect = try SessionRedirect(page: Self.page, key: Self.key)
        let url = redirect.url(for: SessionKey(deviceID: "tv-1", requestorID: "sim-requestor"))
        let handle = String(url.split(separator: "=", maxSplits: 1)[1])
        for index in handle.indices {
            var changed = handle
            changed.replaceSubrange(index...index, with: handle[index] == "A" ? "B" : "A")
            #expect(redirect.session(returningTo: Self.page + "?session=" + changed) == nil, "changed at \(handle.distance(from: handle.startIndex, to: index))")
        }
        let stranger = try SessionRedirect(page: Self.page, key: Array("another fleet's 32-byte redirect key".utf8))
        #expect(stranger.session(returningTo: url) == nil, "another key")
        let elsewhere = try SessionRedirect(page: "https://other.example.com/return", key: Self.key)
        #expect(elsewhere.session(returningTo: url) == nil, "another page")
        for text in ["", Self.page, Self.page + "?session=", Self.page + "?session=%FF", Self.page + "?session=" + String(repeating: "A", count: 100_000),
            Self.page + "?session=AAAA", "not a URL at all", Self.page + "?session=\(handle)&session=\(handle)"]
        {
            #expect(redirect.session(returningTo: text) == nil, "\(text.prefix(80))")
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let bytes = (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            _ = redirect.session(returningTo: Self.page + "?session=" + String(decoding: bytes, as: UTF8.self))
        }
    }

    @Test(arguments: [
        ("https://tv.example.com/return", 31, "at least 32"),
        ("http://tv.example.com/return", 32, "https"),
        ("https://tv.example.com/return?x=1", 32, "without query"),
        ("https://tv.example.com/return#top", 32, "without query or fragment"),
        ("/return", 32, "absolute"),
    ])
    func aShortKeyOrAPageThatIsNotAnHTTPSURLIsRefused(page: String, keyLength: Int, words: String) {
        #expect(throws: SessionRedirectError.self) { try SessionRedirect(page: page, key: Array(repeating: 7, count: keyLength)) }
        do {
            _ = try SessionRedirect(page: page, key: Array(repeating: 7, count: keyLength))
        } catch {
            #expect(error.description.contains(words), "\(error)")
        }
    }

    /// Two nodes with the same redirect key: a login node A started returns to the page on node B,
    /// which finds the session from the URL and finishes it; the same URL given to another session is
    /// refused as a wrong URL.
    @Test func theReturnPageOnAnyNodeFindsTheSessionAndFinishesItsLogin() async throws {
        let rig = Rig()
        let redirect = try SessionRedirect(page: Self.page, key: Self.key)
        func node(_ delegate: RecordingHostDelegate) -> SessionHost {
            var settings = SessionHostSettings(engine: .simulated)
            settings.redirect = redirect
            let clock = rig.clock
            return SessionHost(
                settings: settings, backend: rig.simulator.backend, storage: rig.storage, clock: clock, delegate: delegate,
                environment: { .deterministic(clock: clock, deviceID: $0.deviceID, seed: 3) })
        }
        let nodeA = node(rig.delegate)
        let nodeB = node(RecordingHostDelegate())
        let tv = SessionKey(deviceID: "tv-1", requestorID: SessionHostTests.requestor)
        try await nodeA.call(.getAuthentication(forceAuthn: false, data: [:]), on: tv)
        try await nodeA.call(.setSelectedProvider("acme-cable"), on: tv)
        await nodeA.whenSettled(tv)
        let login = try #require(rig.delegate.lastNavigation)
        let visit = await rig.simulator.userAgent.logIn(at: login, username: "alice", password: "wonderland")
        // The simulated world does not serve the service's page: the browser's last stop is the URL it reached.
        let returned = try #require(visit.hops.last)
        #expect(returned.hasPrefix(redirect.url(for: tv) + "&"), "\(returned)")
        // The page, on node B: the session from the URL alone.
        let found = try #require(redirect.session(returningTo: returned))
        expectEqual(found, tv)
        let someoneElse = SessionKey(deviceID: "tv-2", requestorID: SessionHostTests.requestor)
        let refused = try await nodeB.answer(to: .handleExternalURL(returned), on: someoneElse)
        #expect(statusCodeOf(refused) == "REDIRECT_URL_MISMATCH" || statusCodeOf(refused) == "REDIRECT_NO_PENDING_FLOW", "\(refused)")
        try await expectEqual(nodeB.answer(to: .handleExternalURL(returned), on: found), .setAuthenticationStatus(status: 1, errorCode: ""))
        #expect(await eventually { rig.delegate.answers(of: tv).last?.callback == .setAuthenticationStatus(status: 1, errorCode: "") })
    }
}

/// The production checklist's return page, compiled and run here: its block is this code, line for line.
@Suite("The production checklist's return page")
struct ChecklistReturnPageTests {
    static func checklistExample(rig: Rig, redirectKey: [UInt8]) throws -> (SessionHost, (String) async -> (status: Int, body: String)) {
        var engine = EngineSettings.simulated
        engine.requestTimeout = .seconds(600)  // on the system clock in a suite run all at once: a bound far from the behaviour
        let v2Client = rig.simulator.backend
        let sharedStorage = rig.storage
        let devices = rig.delegate
        // CHECKLIST-RETURN-BEGIN
        let redirect = try SessionRedirect(page: "https://tv.example.com/adobe/return", key: redirectKey)  // 32+ random bytes, every node
        let settings = SessionHostSettings(engine: engine, redirect: redirect)  // each session's redirectURL: the page ?session=…
        let host = SessionHost(settings: settings, backend: v2Client, storage: sharedStorage, delegate: devices)

        // GET /adobe/return?session=…&state=…&mvpd=… — your HTTP framework's route, on any node:
        func returnPage(fullURL: String) async -> (status: Int, body: String) {
            guard let key = redirect.session(returningTo: fullURL) else { return (404, "Unknown sign-in.") }
            let answer = try? await host.answer(to: .handleExternalURL(fullURL), on: key, within: .seconds(10))
            if case .setAuthenticationStatus(1, _)? = answer { return (200, "You are signed in. Go back to your TV.") }
            return (200, "The sign-in did not complete. Start again on your TV.")
        }
        // CHECKLIST-RETURN-END
        return (host, returnPage)
    }

    @Test func theChecklistsReturnPageIsThisCodeAndSignsTheDeviceIn() async throws {
        let block = try ChecklistBlock(opening: "let redirect = try SessionRedirect", marker: "CHECKLIST-RETURN", in: #filePath)
        expectEqual(block.tested, block.documented)

        let rig = Rig(start: SystemClock().now())  // the example's host runs on the system clock
        let (host, returnPage) = try Self.checklistExample(rig: rig, redirectKey: SessionRedirectTests.key)
        let tv = SessionKey(deviceID: "tv-9", requestorID: SessionHostTests.requestor)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: tv)
        try await host.call(.setSelectedProvider("acme-cable"), on: tv)
        await host.whenSettled(tv)
        let visit = await rig.simulator.userAgent.logIn(at: try #require(rig.delegate.lastNavigation), username: "alice", password: "wonderland")
        let page = await returnPage(try #require(visit.hops.last))
        #expect(page.status == 200 && page.body.hasPrefix("You are signed in"), "\(page)")
        await expectEqual(returnPage("https://tv.example.com/adobe/return?session=made-up").status, 404)
    }
}

private func statusCodeOf(_ callback: Callback) -> String? { if case .status(let report) = callback { report.code } else { nil } }
