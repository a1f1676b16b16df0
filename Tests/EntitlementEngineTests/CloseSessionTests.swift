import EntitlementEngine
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
import Testing

/// `closeSession()`: an owner that must let an engine go answers its waiting calls first, and the
/// store keeps the flow for another instance.
@Suite("Closing a session")
struct CloseSessionTests {
    final class Answers: AccessEnablerDelegate {
        let log = Mutex<[AnsweredCallback]>([])
        func callbackEmitted(_ callback: Callback, answering calls: [CallID]) {
            log.withLock { $0.append(AnsweredCallback(callback: callback, answering: calls)) }
        }
        var all: [AnsweredCallback] { log.withLock { $0 } }
    }

    @Test(.timeLimit(.minutes(10)))
    func closingAnswersEveryWaitingCallOnceAndLeavesTheLoginInTheStore() async throws {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 5)
        let storage = InMemoryTokenStorage()
        let answers = Answers()
        let enabler = AccessEnabler(
            backend: simulator.backend, delegate: answers, storage: storage, environment: .deterministic(clock: clock, deviceID: "tv-1"), settings: .simulated)
        await enabler.setRequestor("sim-requestor")
        await enabler.whenIdle()
        await enabler.getAuthentication()
        await enabler.setSelectedProvider("acme-cable")
        await enabler.whenIdle()
        let waiting = Task { try await enabler.answer(to: .getAuthorization(resource: "news-channel", data: [:])) }
        while await enabler.machineSnapshot.authorizations.isEmpty { await Task.yield() }

        await expectEqual(enabler.closeSession(), 3, "getAuthentication, setSelectedProvider and getAuthorization")
        let closed = try await waiting.value
        guard case .status(let report) = closed else {
            Issue.record("not a status: \(closed)")
            return
        }
        expectEqual(report.code, ErrorCode.sessionClosed)
        expectEqual(answers.all.last?.answering, [CallID(2), CallID(3), CallID(4)], "one status answers them all")
        await expectEqual(enabler.closeSession(), 0, "closing twice answers nothing")
        // A later call is answered at once; nothing else is emitted, whatever the clock does.
        try await expectEqual(enabler.answer(to: .checkAuthentication), .status(report))
        let count = answers.all.count
        await clock.advance(by: .seconds(700))
        expectEqual(answers.all.count, count, "the login's deadline no longer fires")
        let stored = try await storage.load(deviceID: "tv-1", requestorID: "sim-requestor")
        #expect(stored.tokens.pendingLogin != nil, "the login waiting for its redirect stays for another instance")
        #expect(await enabler.isClosed)
    }
}
