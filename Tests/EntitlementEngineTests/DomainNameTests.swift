import EntitlementEngine
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
import Testing

/// Nothing only the simulator knows is a default of what talks to Adobe: an engine built with default
/// settings sends no `domainName` (never the simulator's), and a service that needs one says so.
@Suite("The app's domain")
struct DomainNameTests {
    final class Answers: AccessEnablerDelegate {
        let log = Mutex<[Callback]>([])
        func callbackEmitted(_ callback: Callback, answering calls: [CallID]) { log.withLock { $0.append(callback) } }
    }

    final class Requests: EngineMonitor {
        let sent = Mutex<[BackendRequest]>([])
        func observe(_ event: EngineEvent) {
            if case .backendRequested(_, let outgoing) = event { sent.withLock { $0.append(outgoing.request) } }
        }
    }

    @Test func anEngineWithDefaultSettingsSendsNoDomainAndALoginThatNeedsOneFailsNamingIt() async throws {
        #expect(EngineSettings().domainName == nil)
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 5)
        let answers = Answers()
        let requests = Requests()
        let enabler = AccessEnabler(
            backend: simulator.backend, delegate: answers, environment: .deterministic(clock: clock), monitor: requests)
        await enabler.setRequestor("sim-requestor")
        await enabler.getAuthentication()
        await enabler.setSelectedProvider("acme-cable")
        await enabler.whenIdle()
        let sessions = requests.sent.withLock { $0 }.compactMap { request -> String?? in
            if case .createSession(_, _, let domainName, _) = request { return .some(domainName) }
            return nil
        }
        expectEqual(sessions, [nil], "one session request, without a domain")
        let callbacks = answers.log.withLock { $0 }
        let failure = try #require(callbacks.compactMap { callback -> StatusReport? in
            if case .status(let report) = callback { return report }
            return nil
        }.first)
        expectEqual(failure.code, "LOGIN_FAILED")
        #expect(failure.message.contains("set EngineSettings.domainName to the app's domain"), "the report says what to do: \(failure.message)")
        expectEqual(callbacks.last, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication))
        #expect(!callbacks.contains { if case .navigateToUrl = $0 { true } else { false } })

        // With the app's domain set, the same login reaches its page.
        var settings = EngineSettings()
        settings.domainName = "myservice.example"
        let configured = AccessEnabler(
            backend: simulator.backend, delegate: answers, environment: .deterministic(clock: clock, deviceID: "device-2"),
            settings: settings, monitor: requests)
        await configured.setRequestor("sim-requestor")
        await configured.getAuthentication()
        await configured.setSelectedProvider("acme-cable")
        await configured.whenIdle()
        #expect(answers.log.withLock { $0 }.contains { if case .navigateToUrl = $0 { true } else { false } })
        #expect(requests.sent.withLock { $0 }.contains {
            if case .createSession(_, _, "myservice.example", _) = $0 { true } else { false }
        })
    }
}
