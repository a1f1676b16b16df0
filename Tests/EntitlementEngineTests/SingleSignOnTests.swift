import EntitlementEngine
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

@Suite("Single sign-on across requestors sharing a device's token storage", .checksExactlyOnce)
struct SingleSignOnTests {
    /// Two apps on one device: their own engines, one storage, one backend.
    static func twoApps(storage: any TokenStorage = InMemoryTokenStorage()) -> (SimulatedSession, SimulatedSession) {
        let clock = ManualClock()
        let first = SimulatedSession(seed: 1, storage: storage, clock: clock)
        let second = SimulatedSession(seed: 2, storage: storage, clock: clock, simulator: first.simulator)
        return (first, second)
    }

    @Test(arguments: ["memory", "files"])
    func aLoginForOneRequestorSignsTheOtherInSilently(_ store: String) async throws {
        let storage: any TokenStorage =
            store == "memory"
            ? InMemoryTokenStorage() : try FileTokenStorage(folder: ScratchSpace.path("entitle-sso-"))
        let (news, sports) = Self.twoApps(storage: storage)
        await news.signIn()
        await sports.enabler.setRequestor("sim-news")
        await sports.enabler.checkAuthentication()
        #expect(await sports.collectIgnoringTracking() == [
            .setRequestorComplete(success: true), .setAuthenticationStatus(status: 1, errorCode: ""),
        ])
        let token = try #require(try await storage.tokens(deviceID: "device-1", requestorID: "sim-news").authentication)
        #expect(token.requestorID == "sim-news" && token.mvpdID == "acme-cable")
        await sports.enabler.getAuthorization("weather-now")
        await expectEqual(sports.collectIgnoringTracking().map(\.name), ["setToken"])
        await news.expectClean()
        await sports.expectClean()
    }

    @Test func anotherDevicesLoginDoesNotCount() async throws {
        let storage = InMemoryTokenStorage()
        let clock = ManualClock()
        let phone = SimulatedSession(deviceID: "phone", seed: 1, storage: storage, clock: clock)
        let tablet = SimulatedSession(deviceID: "tablet", seed: 2, storage: storage, clock: clock, simulator: phone.simulator)
        await phone.signIn()
        #expect(try await storage.authentications(deviceID: "tablet").isEmpty)
        await tablet.enabler.setRequestor("sim-news")
        await tablet.enabler.checkAuthentication()
        #expect(await tablet.collectIgnoringTracking() == [
            .setRequestorComplete(success: true), .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated),
        ])
        await phone.expectClean()
        await tablet.expectClean()
    }

    @Test func aFileStoreListsOnlyTheDevicesReadableAuthentications() async throws {
        let folder = ScratchSpace.path("entitle-sso-list-")
        let store = try FileTokenStorage(folder: folder)
        let expires = Timestamp(milliseconds: 9_999_999_999_999)
        let a = AuthenticationToken(mvpdID: "m", requestorID: "r1", userID: "u", expires: expires)
        let b = AuthenticationToken(mvpdID: "m", requestorID: "r2", userID: "u", expires: expires)
        try await store.overwrite(StoredTokens(authentication: a, deviceID: "d"), deviceID: "d", requestorID: "r1")
        try await store.overwrite(StoredTokens(authentication: b, deviceID: "other"), deviceID: "other", requestorID: "r2")
        try await store.overwrite(StoredTokens(selectedProvider: "m", deviceID: "d"), deviceID: "d", requestorID: "r3")
        try "garbage".write(toFile: store.path(deviceID: "d", requestorID: "r4"), atomically: true, encoding: .utf8)
        try await expectEqual(store.authentications(deviceID: "d"), [a])
        try await expectEqual(store.authentications(deviceID: "other"), [b])
    }

    /// A storage that cannot list a device's tokens: no single sign-on, nothing else changes.
    final class PlainStorage: TokenStorage {
        let inner = InMemoryTokenStorage()
        func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
            try await inner.load(deviceID: deviceID, requestorID: requestorID)
        }
        func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
            async throws(TokenStorageError) -> StorageVersion
        {
            try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        }
    }

    @Test func aStorageThatCannotListMeansNoSingleSignOn() async throws {
        let (news, sports) = Self.twoApps(storage: PlainStorage())
        await news.signIn()
        await sports.enabler.setRequestor("sim-news")
        await sports.enabler.checkAuthentication()
        await expectEqual(sports.collectIgnoringTracking().last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        await news.expectClean()
        await sports.expectClean()
    }
}
