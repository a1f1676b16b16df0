import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

@Suite("E. Second screen: registration code and polling on the injected clock", .checksExactlyOnce)
struct SecondScreenTests {
    static func tv(pollInterval: Duration = .seconds(5), codeLifetime: Duration = .seconds(1800)) -> SimulatedSession {
        var settings = EngineSettings()
        settings.secondScreen = SecondScreen(pollInterval: pollInterval, codeLifetime: codeLifetime)
        return SimulatedSession(deviceID: "tv", settings: settings)
    }

    func registrationCode(_ callbacks: [Callback]) -> String? {
        callbacks.lazy.compactMap { callback -> String? in
            if case .status(let report) = callback, report.code == "REGCODE" { return report.message }
            return nil
        }.first
    }

    @Test func pollsOncePerIntervalUntilTheCodeIsUsed() async throws {
        let session = Self.tv(pollInterval: .seconds(3))
        await session.configure()
        let call = await session.enabler.setSelectedProvider("acme-cable")
        let code = try #require(registrationCode(await session.collectIgnoringTracking()))
        expectEqual(code.count, 8)
        for _ in 1...4 {
            await session.clock.advance(by: .seconds(3))
            await session.settle()
        }
        await expectEqual(session.simulator.requestCounts[.profileByCode], 4, "one poll per interval, no more")
        #expect(session.ledger.take().isEmpty)
        let visit = await session.userAgent.activate(code: code, username: "alice", password: "wonderland")
        guard case .stoppedAt(let page) = visit.outcome else { Issue.record("activation did not end on a page: \(visit.outcome)"); return }
        #expect(page.title == "Signed in" && page.url == "https://sp.sim/activate/done")
        await session.clock.advance(by: .seconds(3))
        let done = Callback.setAuthenticationStatus(status: 1, errorCode: "")
        await expectEqual(session.collectIgnoringTracking(), [done])
        expectEqual(session.ledger.answers(to: call), [done])
        await session.clock.advance(by: .seconds(30))
        await session.settle()
        await expectEqual(session.simulator.requestCounts[.profileByCode], 5, "polling stops with the login")
        #expect(session.ledger.take().isEmpty)
        await session.expectClean()
    }

    @Test func aUsedOrForeignCodeCannotBeReused() async throws {
        let session = Self.tv()
        await session.configure()
        await session.enabler.setSelectedProvider("acme-cable")
        let code = try #require(registrationCode(await session.collectIgnoringTracking()))
        #expect(await session.userAgent.activate(code: "WRONG234", username: "alice", password: "wonderland").outcome
            == .failed(status: 400, message: "Unknown or expired code."))
        _ = await session.userAgent.activate(code: code, username: "alice", password: "wonderland")
        #expect(await session.userAgent.activate(code: code, username: "bob", password: "builder").outcome
            == .failed(status: 400, message: "Unknown or expired code."), "a code is activated once")
        await session.clock.advance(by: .seconds(5))
        await expectEqual(session.collectIgnoringTracking(), [.setAuthenticationStatus(status: 1, errorCode: "")])
        let token = try #require(await session.enabler.machineSnapshot.storedTokens.authentication)
        expectEqual(token.userID, "acme-7f3a", "alice, not bob")
        await session.expectClean()
    }
}
