import EntitlementEngine
import EntitlementSimulator
import EntitlementTracing
import Foundation
import EntitlementTestSupport
import Testing

/// Inputs the review found trapping: each is now a typed refusal or a saturated value.
@Suite("Every boundary is total")
struct TotalBoundaryTests {
    @Test func timeArithmeticSaturates() {
        let end = Timestamp(milliseconds: .max)
        let start = Timestamp(milliseconds: .min)
        expectEqual(end.adding(.seconds(1)), end)
        expectEqual(start.adding(.seconds(-1)), start)
        expectEqual(Timestamp(milliseconds: 0).adding(.seconds(Int64.max)), end)
        expectEqual(end.milliseconds(since: start), .max)
        expectEqual(start.milliseconds(since: end), .min)
        expectEqual(Duration.seconds(Int64.max).milliseconds, .max)
        expectEqual(Duration.seconds(Int64.min).milliseconds, .min)
    }

    @Test func settingsAreClampedWhereverTheyAreSet() {
        var settings = EngineSettings()
        settings.redirectTimeout = .seconds(7_200)
        expectEqual(settings.redirectTimeout, .seconds(600))
        settings.queueLimit = -1
        expectEqual(settings.queueLimit, 1)
        settings.preauthorizationCacheLifetime = .seconds(Int64.max)
        expectEqual(settings.preauthorizationCacheLifetime, .seconds(86_400))
        settings.expiryLeeway = .seconds(-5)
        expectEqual(settings.expiryLeeway, .zero)
        settings.requestTimeout = .zero
        expectEqual(settings.requestTimeout, .seconds(1))
        settings.preauthorizationLimit = 0
        expectEqual(settings.preauthorizationLimit, 1)
        var screen = SecondScreen()
        screen.pollInterval = .milliseconds(1)
        screen.codeLifetime = .seconds(Int64.max)
        #expect(screen.pollInterval == .seconds(1) && screen.codeLifetime == .seconds(36_000))
        expectEqual(EngineSettings(preauthorizationCacheLifetime: .seconds(Int64.max)).preauthorizationCacheLifetime, .seconds(86_400))
    }

    /// A queue limit set to -1 after creation refused every call.
    @Test func aNegativeQueueLimitSetLaterStillQueuesACall() async {
        var settings = EngineSettings()
        settings.queueLimit = -1
        let session = SimulatedSession(settings: settings)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.checkAuthentication()
        #expect(await session.collectIgnoringTracking() == [
            .setRequestorComplete(success: true), .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated),
        ])
        await session.expectClean()
    }

    /// The pre-authorization lifetime of Int64.max seconds trapped when a decision was cached.
    @Test func theLongestPreauthorizationLifetimeDoesNotTrap() async {
        let session = SimulatedSession(settings: EngineSettings(preauthorizationCacheLifetime: .seconds(Int64.max)))
        await session.signIn()
        await session.enabler.checkPreauthorizedResources(["news-channel"])
        await expectEqual(session.collectIgnoringTracking(), [.preauthorizedResources(["news-channel"])])
        await session.expectClean()
    }

    /// A token file whose `expires` is the minimum 64-bit value trapped at `setRequestor`.
    @Test(arguments: [Int64.min, Int64.max, 0, -1])
    func aStoredTokenWithAnExtremeExpiryDoesNotTrap(expires: Int64) async throws {
        let storage = InMemoryTokenStorage()
        let token = AuthenticationToken(
            mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "u", expires: Timestamp(milliseconds: expires))
        _ = try await storage.save(
            StoredTokens(authentication: token, deviceID: "device-1"),
            deviceID: "device-1", requestorID: "sim-requestor", replacing: .absent)
        let session = SimulatedSession(storage: storage)
        await session.configure()
        await session.enabler.checkAuthentication()
        await session.enabler.getMetadata(.authenticationExpiry)
        let callbacks = await session.collectIgnoringTracking()
        expectEqual(callbacks.first, .setAuthenticationStatus(status: expires == .max ? 1 : 0, errorCode: expires == .max ? "" : ErrorCode.userNotAuthenticated))
        await session.expectClean()
    }
}
