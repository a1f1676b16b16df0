import EntitlementEngine
import EntitlementSimulator
import Foundation
import Testing

/// Nothing the engine holds grows without bound: expired cache entries leave memory and storage.
@Suite("Bounded growth")
struct BoundedGrowthTests {
    let t0 = Timestamp(milliseconds: 1_000_000)
    let configuration = RequestorConfiguration(
        requestorID: "req", mvpds: [MVPD(id: "acme", displayName: "Acme")], authenticationEndpoint: "https://sp/authn",
        logoutEndpoint: "https://sp/logout")

    /// The review kept 10,001 expired authorizations in memory and in the saved file two hours later.
    @Test func expiredAuthorizationsAreEvictedAndTheSmallerSetIsSaved() {
        let day = t0.adding(.seconds(86_400))
        let login = AuthenticationToken(value: "authn", mvpdID: "acme", requestorID: "req", userID: "u", expires: day)
        var authorizations: [String: AuthorizationToken] = [:]
        for index in 0...10_000 {
            authorizations["resource-\(index)"] = AuthorizationToken(
                value: "authz-\(index)", resource: "resource-\(index)", expires: t0.adding(.seconds(3_600)))
        }
        authorizations["lasting"] = AuthorizationToken(value: "authz", resource: "lasting", expires: day)
        var machine = EntitlementMachine(deviceID: "dev")
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        let stored = StoredTokens(authentication: login, authorizations: authorizations, deviceID: "dev")
        _ = machine.handle(.configurationLoaded(OperationID(1), configuration, stored), at: t0)
        #expect(machine.authorizationCache.count == 10_002)
        let actions = machine.handle(.callReceived(CallID(2), .checkAuthentication), at: t0.adding(.seconds(7_200)))
        #expect(machine.authorizationCache.keys.sorted() == ["lasting"])
        guard case .persist(let saved, _)? = actions.first else {
            Issue.record("the smaller set was not saved first: \(actions)")
            return
        }
        #expect(saved.authorizations.keys.sorted() == ["lasting"])
    }

    @Test func expiredPreauthorizationDecisionsAreEvicted() async {
        let session = SimulatedSession()
        await session.signIn()
        await session.enabler.checkPreauthorizedResources(["news-channel", "movies-hd"])
        _ = await session.collect()
        #expect(await session.enabler.machineSnapshot.preauthorizationCache.count == 2)
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
        #expect(received.count == 3, "the buffered callbacks are delivered, then the stream ends")
        #expect(received.first == .setRequestorComplete(success: true))
        await session.expectClean()
    }
}
