import EntitlementEngine
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

/// The storage contract: versioned compare-and-set in both stores, and an engine that never
/// loses an update, never counts a failed save as saved, and completes a pending login once.
@Suite("Token storage never loses an update", .checksExactlyOnce)
struct StorageContractTests {
    static func temporaryFolder() -> String { ScratchSpace.path("entitle-cas-") }

    static let stores: [@Sendable () throws -> any TokenStorage] = [
        { InMemoryTokenStorage() }, { try FileTokenStorage(folder: temporaryFolder()) },
    ]

    @Test(arguments: 0..<2)
    func aSaveNamingAnOldVersionWritesNothing(store index: Int) async throws {
        let store = try Self.stores[index]()
        let first = StoredTokens(selectedProvider: "a", deviceID: "d")
        let second = StoredTokens(selectedProvider: "b", deviceID: "d")
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), .absent)
        let v1 = try await store.save(first, deviceID: "d", requestorID: "r", replacing: .absent)
        #expect(v1 > .absent)
        await #expect(throws: TokenStorageError.conflict(current: v1)) {
            try await store.save(second, deviceID: "d", requestorID: "r", replacing: .absent)
        }
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), VersionedTokens(first, version: v1))
        // Clearing keeps a version: an old version can never match again (no ABA).
        let v2 = try await store.save(.empty, deviceID: "d", requestorID: "r", replacing: v1)
        try await expectEqual(store.version(deviceID: "d", requestorID: "r"), v2)
        await #expect(throws: TokenStorageError.conflict(current: v2)) {
            try await store.save(second, deviceID: "d", requestorID: "r", replacing: .absent)
        }
        try await expectEqual(store.load(deviceID: "d", requestorID: "r"), VersionedTokens(.empty, version: v2))
    }

    @Test func theFileStoreSeesAWriteByAnotherStoreObject() async throws {
        let folder = Self.temporaryFolder()
        let mine = try FileTokenStorage(folder: folder)
        let theirs = try FileTokenStorage(folder: folder)
        let v1 = try await mine.save(StoredTokens(selectedProvider: "a", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: .absent)
        try await expectEqual(mine.version(deviceID: "d", requestorID: "r"), v1)
        let v2 = try await theirs.save(StoredTokens(selectedProvider: "b", deviceID: "d"), deviceID: "d", requestorID: "r", replacing: v1)
        try await expectEqual(mine.version(deviceID: "d", requestorID: "r"), v2, "a cached version must not hide another writer")
        await #expect(throws: TokenStorageError.conflict(current: v2)) {
            try await mine.save(.empty, deviceID: "d", requestorID: "r", replacing: v1)
        }
    }

    /// The review's first finding: another process clears the store (a logout on another node)
    /// while this engine holds the login; decisions are not stored, so no save of this engine's
    /// may bring the login back, and the next call sees the store's new version.
    @Test func aLoginClearedByAnotherWriterDoesNotComeBack() async throws {
        let storage = ScriptedTokenStorage()
        let session = SimulatedSession(storage: storage)
        await session.signIn()
        let login = try #require(try await storage.tokens(deviceID: "device-1", requestorID: "sim-requestor").authentication)
        let savesBefore = storage.history.count
        try await storage.inner.overwrite(.empty, deviceID: "device-1", requestorID: "sim-requestor")
        let call = await session.enabler.checkAuthorization("news-channel")
        let callbacks = await session.collectIgnoringTracking()
        #expect(callbacks.last == .tokenRequestFailed(
            resource: "news-channel", errorCode: ErrorCode.userNotAuthenticated,
            errorDescription: "The user is not authenticated."), "decided again on what storage holds now")
        expectEqual(session.ledger.answers(to: call).count, 1)
        let stored = try await storage.tokens(deviceID: "device-1", requestorID: "sim-requestor")
        #expect(stored.authentication == nil, "the cleared login came back")
        #expect(storage.history.dropFirst(savesBefore).allSatisfy { $0.tokens.authentication != login })
        await session.enabler.checkAuthentication()
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated)])
        await session.expectClean()
    }

    /// The review's second finding: after a failed save of a logout, `checkAuthentication` answered 1.
    /// A step whose save fails for good is not taken: the logout is refused with STORAGE_WRITE_FAILED,
    /// the engine stays signed in as the store says, and once the store heals the logout works.
    @Test func aFailedSaveIsReportedAndNeverCountsAsSaved() async throws {
        let storage = ScriptedTokenStorage()
        let session = SimulatedSession(storage: storage)
        await session.signIn()
        storage.failSaves(true)
        let logout = await session.enabler.logout()
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(callbacks.map { statusCode($0) }, [ErrorCode.storageWriteFailed], "\(callbacks)")
        expectEqual(session.ledger.answers(to: logout).count, 1, "the refusal answers the logout")
        if case .status(let report)? = callbacks.first {
            #expect(report.message.contains("could not save"))
            #expect(!report.message.contains("authn."), "no token in the message")
        }
        // The store still holds the login, and so does this engine: every instance agrees.
        #expect(try await storage.tokens(deviceID: "device-1", requestorID: "sim-requestor").authentication != nil)
        await session.enabler.checkAuthentication()
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        // The store heals: the same call logs out (and waits for the MVPD's logout page).
        storage.failSaves(false)
        let again = await session.enabler.logout()
        await expectEqual(session.collectIgnoringTracking().first?.name, "navigateToUrl")
        #expect(try await storage.tokens(deviceID: "device-1", requestorID: "sim-requestor").authentication == nil)
        await session.expectClean(pending: [again])
    }

    /// The review's third finding: one redirect completed a resumed login on two instances. The redirect
    /// is accepted once; the same redirect on the other instance (the browser retrying it) is not accepted
    /// again: it joins the login, reads its profile by the session code and is answered with its outcome.
    @Test(arguments: 0..<2)
    func oneRedirectCompletesAPendingLoginOnExactlyOneInstance(store index: Int) async throws {
        let storage = try Self.stores[index]()
        let clock = ManualClock()
        let a = SimulatedSession(seed: 1, storage: storage, clock: clock)
        let b = SimulatedSession(seed: 2, storage: storage, clock: clock, simulator: a.simulator)
        let login = await a.startLogin()
        await b.configure()  // B resumes the pending login from storage
        let redirect = await a.redirectURL(from: login)
        let onA = await a.enabler.handleExternalURL(redirect)
        let onB = await b.enabler.handleExternalURL(redirect)
        await a.settle()
        await b.settle()
        let exchanges = a.ledger.backendRequests.filter { $0 == .profileByCode }.count
            + b.ledger.backendRequests.filter { $0 == .profileByCode }.count
        expectEqual(exchanges, 2, "the profile was read \(exchanges) times: once for the redirect, once for the retry")
        expectEqual(a.ledger.answers(to: onA).last, .setAuthenticationStatus(status: 1, errorCode: ""))
        expectEqual(b.ledger.answers(to: onB), [.setAuthenticationStatus(status: 1, errorCode: "")], "the retry answered with the login's outcome")
        // The login A completed is the one both see, and it works.
        await b.enabler.getAuthorization("news-channel")
        await b.settle()
        #expect(b.ledger.callbacks.contains { $0.name == "setToken" })
        _ = a.ledger.take()
        _ = b.ledger.take()
        await a.expectClean()
        await b.expectClean()
    }

    /// Both instances hold the pending login and race to take the redirect at the same moment: one takes
    /// it; the other reads the profile at most once more, and both calls get the login's one outcome.
    @Test func twoInstancesRacingForOneRedirectTakeItOnce() async throws {
        for seed in UInt64(1)...20 {
            let storage = InMemoryTokenStorage()
            let clock = ManualClock()
            let a = SimulatedSession(seed: seed, storage: storage, clock: clock)
            let b = SimulatedSession(seed: seed + 100, storage: storage, clock: clock, simulator: a.simulator)
            let login = await a.startLogin()
            await b.configure()
            let redirect = await a.redirectURL(from: login)
            async let onA = a.enabler.handleExternalURL(redirect)
            async let onB = b.enabler.handleExternalURL(redirect)
            let (takenOnA, takenOnB) = await (onA, onB)
            await a.settle()
            await b.settle()
            let exchanges = (a.ledger.backendRequests + b.ledger.backendRequests).filter { $0 == .profileByCode }.count
            #expect((1...2).contains(exchanges), "seed \(seed): the profile was read \(exchanges) times")
            // Each call is answered once: signed in, or — the login already over when it came — refused as used up.
            for (ledger, call) in [(a.ledger, takenOnA), (b.ledger, takenOnB)] {
                let answers = ledger.answers(to: call)
                #expect(
                    answers == [.setAuthenticationStatus(status: 1, errorCode: "")]
                        || (answers.count == 1 && statusCode(answers.first) == "REDIRECT_NO_PENDING_FLOW"), "seed \(seed): \(answers)")
            }
            // Whichever took the redirect, A's calls are answered once A reads the outcome.
            await a.enabler.checkAuthentication()
            await a.settle()
            expectEqual(a.ledger.answers(to: CallID(2)), [.setAuthenticationStatus(status: 1, errorCode: "")], "seed \(seed)")
            _ = a.ledger.take()
            _ = b.ledger.take()
            await a.expectClean()
            await b.expectClean()
        }
    }

    /// Another node saves between a configuring engine's read of the store and its own save (the
    /// configuration's step clears tokens bound to another device): the configuration is read and decided
    /// again on what the store now holds — the other node's login — rather than decided again, blind, on
    /// the read it lost with (each such attempt loses again; the last one's save counts as failed).
    @Test func aConfigurationWhoseSaveLosesToAnotherWriterIsReadAgain() async throws {
        let storage = ScriptedTokenStorage()
        let clock = ManualClock()
        let a = SimulatedSession(seed: 1, storage: storage, clock: clock)
        await a.signIn()
        let login = try await storage.tokens(deviceID: "device-1", requestorID: "sim-requestor")
        try await storage.inner.overwrite(StoredTokens(selectedProvider: "acme-cable", deviceID: "device-2"), deviceID: "device-1", requestorID: "sim-requestor")
        storage.beforeNextSave { try? await storage.inner.overwrite(login, deviceID: "device-1", requestorID: "sim-requestor") }
        let b = SimulatedSession(seed: 2, storage: storage, clock: clock, simulator: a.simulator)
        let savesBefore = storage.history.count
        await b.configure()
        expectEqual(storage.history.count, savesBefore, "nothing to save once the other node's login is read: \(storage.history.dropFirst(savesBefore).map(\.tokens))")
        try await expectEqual(storage.tokens(deviceID: "device-1", requestorID: "sim-requestor"), login)
        await b.enabler.checkAuthentication()
        await expectEqual(b.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        _ = a.ledger.take()
        await a.expectClean()
        await b.expectClean()
    }
}
