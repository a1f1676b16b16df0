import EntitlementEngine
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

/// Nothing the engine holds grows without bound: expired cache entries leave memory and storage.
@Suite("Bounded growth")
struct BoundedGrowthTests {
    let t0 = Timestamp(milliseconds: 1_000_000)
    let configuration = RequestorConfiguration(requestorID: "req", mvpds: [MVPD(id: "acme", displayName: "Acme")])

    /// The review kept 10,001 expired authorizations in memory two hours later; decisions are not
    /// cached any more, but their windows (for `TTL_AUTHZ`) are kept, and must leave memory too.
    @Test func expiredDecisionWindowsAreEvicted() {
        let day = t0.adding(.seconds(86_400))
        let login = AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: day)
        var machine = EntitlementMachine(deviceID: "dev")
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, StoredTokens(authentication: login, deviceID: "dev")), at: t0)
        func decide(_ resource: String, call: UInt64, until end: Timestamp) {
            let actions = machine.handle(.callReceived(CallID(call), .getAuthorization(resource: resource, data: [:])), at: t0).effects.apartFromDeadlines
            guard case .callBackend(let operation, _)? = actions.last else { return }
            let decision = V2Decision(
                resource: resource, serviceProvider: "req", mvpd: "acme", authorized: true, source: .mvpd,
                token: V2Decision.Token(notBefore: t0, notAfter: t0.adding(.seconds(420)), serialized: "media"),
                notBefore: t0, notAfter: end)
            _ = machine.handle(.backendAnswered(operation, .decisions([decision])), at: t0)
        }
        for index in 0..<1_000 { decide("resource-\(index)", call: UInt64(index + 2), until: t0.adding(.seconds(3_600))) }
        decide("lasting", call: 5_000, until: day)
        expectEqual(machine.authorizationExpiries.count, 1_001)
        _ = machine.handle(.callReceived(CallID(6_000), .checkAuthentication), at: t0.adding(.seconds(7_200)))
        expectEqual(machine.authorizationExpiries.keys.sorted(), ["lasting"])
    }

    @Test func expiredPreauthorizationDecisionsAreEvicted() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.checkPreauthorizedResources(["news-channel", "movies-hd"])
        _ = await session.collect()
        await expectEqual(session.enabler.machineSnapshot.preauthorizationCache.count, 2)
        await session.clock.advance(by: .seconds(600))
        await session.enabler.checkAuthentication()
        _ = await session.collect()
        #expect(await session.enabler.machineSnapshot.preauthorizationCache.isEmpty)
        await session.expectClean()
    }

    /// The review saw an unread stream grow by 56 MB per 400,000 callbacks.
    @Test func aConsumerThatFallsABufferBehindIsCutOffNotBufferedForEver() async {
        let session = SimulatedSession()
        let stream = await session.enabler.callbacks(bufferLimit: 3)
        await session.configure()
        for _ in 0..<5 { await session.enabler.checkAuthentication() }
        _ = await session.collect()
        var received: [Callback] = []
        for await callback in stream { received.append(callback) }  // ends: the stream was cut off
        expectEqual(received.count, 3, "the buffered callbacks are delivered, then the stream ends")
        expectEqual(received.first, .setRequestorComplete(success: true))
        await session.expectClean()
    }
}
