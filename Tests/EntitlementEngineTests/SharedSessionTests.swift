import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// Sessions that outlive one process and one node: pending logins and tokens live in storage.
@Suite("Sessions shared through token storage", .checksExactlyOnce)
struct SharedSessionTests {
    /// Two engine instances for one device, sharing storage and the backend (two nodes of a fleet).
    func pair(storage: any TokenStorage = InMemoryTokenStorage(), settings: EngineSettings = .simulated) -> (SimulatedSession, SimulatedSession) {
        let clock = ManualClock()
        let a = SimulatedSession(seed: 1, settings: settings, storage: storage, clock: clock)
        let b = SimulatedSession(seed: 2, settings: settings, storage: storage, clock: clock, simulator: a.simulator)
        return (a, b)
    }

    @Test func aLoginStartedOnOneInstanceCompletesOnAnother() async throws {
        let (a, b) = pair()
        await a.configure()
        await b.configure()
        let get = await a.enabler.getAuthentication()
        let select = await a.enabler.setSelectedProvider("acme-cable")
        let login = try #require(await a.collect().lastNavigation)
        let redirect = await a.redirectURL(from: login)
        // The web view's redirect reaches node B.
        let handled = await b.enabler.handleExternalURL(redirect)
        await expectEqual(b.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        expectEqual(b.ledger.answers(to: handled), [.setAuthenticationStatus(status: 1, errorCode: "")])
        // Node A learns it with its next input and answers the calls that waited there.
        await a.enabler.checkAuthentication()
        #expect(
            await a.collectIgnoringTracking() == [
                .setAuthenticationStatus(status: 1, errorCode: ""), .setAuthenticationStatus(status: 1, errorCode: ""),
            ])
        expectEqual(a.ledger.answers(to: get), [.setAuthenticationStatus(status: 1, errorCode: "")])
        expectEqual(a.ledger.answers(to: select), [.setAuthenticationStatus(status: 1, errorCode: "")])
        // The state was used once: the same redirect is refused everywhere now.
        await a.enabler.handleExternalURL(redirect)
        expectEqual(statusCode(await a.collect().first), "REDIRECT_NO_PENDING_FLOW")
        await a.expectClean()
        await b.expectClean()
    }

    /// A store that counts the version checks the engine had to ask for, and knows its version at once
    /// when told to (as a store in memory does).
    final class CountingStorage: TokenStorage {
        let inner = InMemoryTokenStorage()
        let asked = Mutex(0)
        let knowsAtOnce: Bool
        init(knowsAtOnce: Bool) { self.knowsAtOnce = knowsAtOnce }
        func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
            try await inner.load(deviceID: deviceID, requestorID: requestorID)
        }
        func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
            async throws(TokenStorageError) -> StorageVersion
        {
            try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        }
        func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
            asked.withLock { $0 += 1 }
            return try await inner.version(deviceID: deviceID, requestorID: requestorID)
        }
        func knownVersion(deviceID: String, requestorID: String) -> StorageVersion? {
            knowsAtOnce ? inner.knownVersion(deviceID: deviceID, requestorID: requestorID) : nil
        }
    }

    /// The version checked before every input comes from `knownVersion` when the store knows it at
    /// once (no hop off the engine's actor), and another instance's save is still seen at the next input.
    @Test func aVersionTheStoreKnowsAtOnceIsNotAskedForAndStillSeesAnotherNodesSave() async throws {
        for knowsAtOnce in [true, false] {
            let storage = CountingStorage(knowsAtOnce: knowsAtOnce)
            let (a, b) = pair(storage: storage)
            await a.configure()
            for _ in 0..<5 { await a.enabler.checkAuthentication() }
            _ = await a.collect()
            let asked = storage.asked.withLock { $0 }
            #expect(knowsAtOnce ? asked == 0 : asked >= 5, "knows at once: \(knowsAtOnce), asked \(asked) times")
            await b.signIn()
            await a.enabler.checkAuthentication()
            await expectEqual(a.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")], "node B's login seen")
            _ = b.ledger.take()
            await a.expectClean()
            await b.expectClean()
        }
    }

    @Test func anAuthorizationWaitingOnOneInstanceContinuesWhenAnotherCompletesTheLogin() async throws {
        let (a, b) = pair()
        await a.configure()
        await b.configure()
        let authorization = await a.enabler.getAuthorization("news-channel")
        await a.enabler.setSelectedProvider("acme-cable")
        let redirect = await a.redirectURL(from: try #require(await a.collect().lastNavigation))
        await b.enabler.handleExternalURL(redirect)
        _ = await b.collect()
        await a.enabler.getSelectedProvider()
        let callbacks = await a.collectIgnoringTracking()
        #expect(callbacks.contains(.setAuthenticationStatus(status: 1, errorCode: "")))
        expectEqual(a.ledger.answers(to: authorization).first?.name, "setToken")
        await a.expectClean()
        await b.expectClean()
    }

    /// The other node logged in (and got a decision for the resource): the waiting authorization
    /// here goes on with that login and asks for its own decision — decisions are never shared.
    @Test func aWaitingAuthorizationAsksForItsOwnDecisionAfterAnotherNodesLogin() async throws {
        let (a, b) = pair()
        await a.configure()
        let authorization = await a.enabler.getAuthorization("news-channel")
        let select = await a.enabler.setSelectedProvider("acme-cable")
        _ = await a.collect()  // A waits for its redirect
        await b.signIn()
        await b.enabler.getAuthorization("news-channel")
        await expectEqual(b.collectIgnoringTracking().first?.name, "setToken")
        await a.enabler.getSelectedProvider()
        let callbacks = await a.collectIgnoringTracking()
        #expect(callbacks.contains(.setAuthenticationStatus(status: 1, errorCode: "")))
        expectEqual(a.ledger.answers(to: authorization).first?.name, "setToken")
        expectEqual(a.ledger.answers(to: select), [.setAuthenticationStatus(status: 1, errorCode: "")])
        expectEqual(a.ledger.backendRequests.filter { $0 == .authorize }.count, 1, "its own decision")
        await a.expectClean()
        await b.expectClean()
    }

    @Test func anEngineRestartedMidLoginResumesIt() async throws {
        let storage = InMemoryTokenStorage()
        let clock = ManualClock()
        let before = SimulatedSession(seed: 1, storage: storage, clock: clock)
        await before.configure()
        await before.enabler.getAuthentication()
        await before.enabler.setSelectedProvider("acme-cable")
        let redirect = await before.redirectURL(from: try #require(await before.collect().lastNavigation))
        // The process goes away here; a new engine on the same storage picks the login up.
        let after = SimulatedSession(seed: 2, storage: storage, clock: clock, simulator: before.simulator)
        await after.configure()
        await after.enabler.handleExternalURL(redirect)
        await expectEqual(after.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await after.enabler.getAuthorization("movies-hd")
        await expectEqual(after.collectIgnoringTracking().first?.name, "setToken")
        await before.expectClean(pending: [CallID(2), CallID(3)])  // the calls of the process that went away
        await after.expectClean()
    }

    @Test func aResumedLoginStillExpiresAtItsDeadline() async throws {
        let storage = InMemoryTokenStorage()
        let clock = ManualClock()
        let before = SimulatedSession(seed: 1, storage: storage, clock: clock)
        await before.configure()
        await before.enabler.setSelectedProvider("acme-cable")
        _ = await before.collect()
        await clock.advance(by: .seconds(300))
        let after = SimulatedSession(seed: 2, storage: storage, clock: clock, simulator: before.simulator)
        await after.configure()
        await clock.advance(by: .seconds(299))
        #expect(after.ledger.take().isEmpty)
        await clock.advance(by: .seconds(1))
        let expired = await after.collectIgnoringTracking()
        // The login expired (status LOGIN_EXPIRED); no call of this engine's took part in it, so no
        // setAuthenticationStatus answers nobody.
        expectEqual(expired.map(\.name), ["status"])
        // The first engine is still alive in this test: its own copy of the deadline ends its call too.
        expectEqual(before.ledger.takeIgnoringTracking().last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication))
        await before.expectClean()
        await after.expectClean()
    }

    /// A store whose reads can be made to fail (an outage longer than the retry window).
    final class UnreadableStorage: TokenStorage {
        let inner = InMemoryTokenStorage()
        let unreadable = Mutex(false)
        private func read() throws(TokenStorageError) {
            if unreadable.withLock({ $0 }) { throw .unavailable("the store is restarting (LOADING)") }
        }
        func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
            try read()
            return try await inner.load(deviceID: deviceID, requestorID: requestorID)
        }
        func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
            async throws(TokenStorageError) -> StorageVersion
        {
            try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        }
        func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
            try read()
            return try await inner.version(deviceID: deviceID, requestorID: requestorID)
        }
    }

    /// A node that cannot read the store past the retry window does not answer from what it last read:
    /// signed in on both nodes, the device logs out through A; B, unable to read the store, refuses the
    /// device's calls with a passing, typed `STORAGE_UNAVAILABLE` (never "signed in"), and once the store
    /// answers again it follows the logout.
    @Test func aNodeThatCannotReadTheStoreRefusesCallsInsteadOfAnsweringFromAnOlderView() async throws {
        let storage = UnreadableStorage()
        var settings = EngineSettings.simulated
        settings.storageRetryWindow = .milliseconds(200)
        let (a, b) = pair(storage: storage, settings: settings)
        await a.signIn()
        await b.configure()
        await b.enabler.checkAuthentication()
        expectEqual(b.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")], "logged in on A, seen on B")
        await a.enabler.logout()
        _ = await a.collect()
        storage.unreadable.withLock { $0 = true }
        let refused = await b.enabler.checkAuthentication()
        let answers = b.ledger.answers(to: refused)
        #expect(answers.count == 1 && statusCode(answers.first) == ErrorCode.storageUnavailable, "\(answers)")
        _ = b.ledger.take()
        storage.unreadable.withLock { $0 = false }
        await b.enabler.checkAuthentication()
        #expect(
            b.ledger.takeIgnoringTracking() == [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await a.expectClean(pending: [CallID(5)])  // A's logout waits for its redirect
        await b.expectClean()
    }

    @Test func aLogoutOnOneInstanceIsSeenByAnother() async throws {
        let (a, b) = pair()
        await a.signIn()
        await b.configure()
        await b.enabler.checkAuthentication()
        expectEqual(b.ledger.takeIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")], "logged in on A, seen on B")
        await a.enabler.logout()
        _ = await a.collect()
        await b.enabler.checkAuthentication()
        #expect(
            b.ledger.takeIgnoringTracking() == [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await a.expectClean(pending: [CallID(5)])  // A's logout waits for its redirect
        await b.expectClean()
    }

    @Test func aLoginStartedInOneProcessCompletesInAnotherSharingAFileStore() async throws {
        let folder = ScratchSpace.path("entitle-shared-")
        let started = try await ChildProcess.run(FileTokenStorageTests.entitle.path, ["session-start", folder])
        expectEqual(started.termination, .exited(0))
        let lines = String(decoding: started.output, as: UTF8.self)
            .split(separator: "\n").map(String.init)
        let redirect = try #require(lines.first)
        #expect(redirect.hasPrefix("adobepass://ios.app?state="))
        // This process: another engine, another simulator of the same world sharing the service's
        // state (the profile the login saved there), the same folder.
        let session = SimulatedSession(seed: 3, storage: try FileTokenStorage(folder: folder))
        #expect(await session.simulator.importState(try #require(lines.dropFirst().first)))
        await session.configure()
        await expectEqual(session.enabler.machineSnapshot.authentication.kind, .awaitingRedirect, "the login was resumed")
        let handled = await session.enabler.handleExternalURL(redirect)
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        expectEqual(session.ledger.answers(to: handled), [.setAuthenticationStatus(status: 1, errorCode: "")])
        await session.enabler.getAuthorization("sports-live")
        await expectEqual(session.collectIgnoringTracking().first?.name, "setToken")
        let stored = try await FileTokenStorage(folder: folder).tokens(deviceID: "device-1", requestorID: "sim-requestor")
        #expect(stored.authentication != nil && stored.pendingLogin == nil)
        await session.expectClean()
    }
}
