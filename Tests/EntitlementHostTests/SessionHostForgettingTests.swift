import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import EntitlementTestSupport
import Testing

/// Sessions that hold nothing, forgotten: drive-by devices leave nothing behind, the host's tables
/// shrink, and what holds something stays.
extension SessionHostTests {
    /// Devices that pass by once (a checkAuthentication, nothing stored) are forgotten after the
    /// host's time; a device that holds a login, and one with a picker open, are kept.
    @Test func driveByDevicesAreForgottenAndDevicesThatHoldSomethingAreKept() async throws {
        let rig = Rig()
        let clock = rig.clock
        let host = Self.forgettingHost(rig, after: .seconds(600))
        for device in 1...200 {
            _ = try await host.answer(to: .checkAuthentication, on: SessionKey(deviceID: "passer-\(device)", requestorID: Self.requestor))
        }
        let picking = SessionKey(deviceID: "picking", requestorID: Self.requestor)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: picking)
        let member = try await Self.signedIn("member", on: host, rig)
        for _ in 0..<12 {  // two idle sweeps a minute apart rest them; ten minutes later they are forgotten
            await clock.advance(by: .seconds(60))
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(await eventually { host.statistics.forgotten == 200 }, "\(host.statistics)")
        #expect(host.residency(of: SessionKey(deviceID: "passer-1", requestorID: Self.requestor)) == nil)
        expectEqual(host.residency(of: member), .resting, "a login is kept")
        expectEqual(host.residency(of: picking), .resting, "a picker's waiting call is kept")
        expectEqual(host.statistics.resting, 2)
        try await expectEqual(host.answer(to: .checkAuthentication, on: member), .setAuthenticationStatus(status: 1, errorCode: ""))
        #expect(await host.close(picking))
        expectEqual(rig.delegate.answers(of: picking).last?.callback, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.providerNotSelected))
    }

    /// Thousands of drive-by devices forgotten at once shrink the host's tables (renumbering its slots):
    /// a resting login, resident engines and new devices are all still found, and the recency list
    /// still puts the resident ones to rest in order.
    @Test func forgettingMostSessionsShrinksTheTablesAndKeepsTheRest() async throws {
        let rig = Rig()
        let clock = rig.clock
        let host = Self.forgettingHost(rig, after: .seconds(60))
        let member = try await Self.signedIn("member", on: host, rig)
        for device in 1...3_000 {
            _ = try await host.answer(to: .checkAuthentication, on: SessionKey(deviceID: "passer-\(device)", requestorID: Self.requestor))
        }
        await clock.advance(by: .seconds(30))
        let recent = (1...3).map { SessionKey(deviceID: "recent-\($0)", requestorID: Self.requestor) }
        for key in recent { _ = try await host.answer(to: .checkAuthentication, on: key) }
        await clock.advance(by: .seconds(31))
        await host.evictIdleSessions()  // the passers rest and are forgotten; the recent three stay resident, linked
        expectEqual(host.statistics.forgotten, 3_000, "\(host.statistics)")
        #expect(host.statistics.resident == 3 && host.statistics.resting == 1, "\(host.statistics)")
        #expect(host.residency(of: SessionKey(deviceID: "passer-7", requestorID: Self.requestor)) == nil)
        for key in recent { #expect(host.residency(of: key) == .resident) }
        try await expectEqual(host.answer(to: .checkAuthentication, on: member), .setAuthenticationStatus(status: 1, errorCode: ""))
        let newcomer = SessionKey(deviceID: "newcomer", requestorID: Self.requestor)
        try await expectEqual(host.answer(to: .checkAuthentication, on: newcomer), .setAuthenticationStatus(status: 0, errorCode: ErrorCode.userNotAuthenticated))
        let evictedBefore = host.statistics.evicted
        await clock.advance(by: .seconds(61))  // the host's own sweep, or this one
        await host.evictIdleSessions()
        expectEqual(host.statistics.evicted - evictedBefore, 5, "the recency list reaches every resident engine: \(host.statistics)")
        expectEqual(host.statistics.resident, 0)
    }

    /// A host on `rig` sweeping every minute that forgets sessions holding nothing `after` their last call.
    static func forgettingHost(_ rig: Rig, after: Duration) -> SessionHost {
        let clock = rig.clock
        return SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(60), providerChoiceTimeout: nil, forgetEmptySessionsAfter: after, engine: .simulated),
            backend: rig.simulator.backend, storage: rig.storage, clock: clock, delegate: rig.delegate,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
    }

    /// A session of `device` signed in as alice through the picker, the MVPD's page and the redirect.
    static func signedIn(_ device: String, on host: SessionHost, _ rig: Rig) async throws -> SessionKey {
        let key = SessionKey(deviceID: device, requestorID: requestor)
        try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
        try await host.call(.setSelectedProvider("acme-cable"), on: key)
        await host.whenSettled(key)
        let url = try #require(rig.delegate.lastNavigation)
        let visit = await rig.simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland")
        _ = try await host.answer(to: .handleExternalURL(try #require(visit.appURL)), on: key)
        return key
    }
}
