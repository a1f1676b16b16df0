import EntitlementEngine
import EntitlementSimulator
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// The production clock's timers: one fires once, a cancelled one never fires and lets go at once of
/// what its work holds, many fire each once in any order of adding, and the live random source draws
/// every byte.
@Suite("System clock and random source")
struct SystemClockTests {
    final class Held: Sendable {}

    final class Count: Sendable {
        let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var current: Int { value.withLock { $0 } }
    }

    @Test func aTimerFiresOnceAndACancelledOneNeverDoesAndIsReleasedAtOnce() async throws {
        let clock = SystemClock()
        let fired = Count()
        _ = clock.schedule(at: clock.now().adding(.milliseconds(20))) { fired.add() }
        weak var released: Held?
        var cancelled: ScheduledTimer?
        do {
            let held = Held()
            released = held
            cancelled = clock.schedule(at: clock.now().adding(.seconds(600))) { withExtendedLifetime(held) { fired.add() } }
        }
        #expect(released != nil, "the pending timer holds its work")
        cancelled?.cancel()
        cancelled = nil
        for _ in 0..<200 where released != nil || fired.current == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(released == nil, "a cancelled timer lets go of its work long before its deadline")
        try await Task.sleep(for: .milliseconds(50))
        expectEqual(fired.current, 1, "the due timer fired once; the cancelled one never")
    }

    @Test func manyTimersEachFireOnceUnlessCancelledAndASoonerOneIsNotHeldBehindALaterOne() async throws {
        let clock = SystemClock()
        let far = clock.schedule(at: clock.now().adding(.seconds(3_600))) {}
        try await Task.sleep(for: .milliseconds(100))  // the timer thread now waits for the far one
        let fired = Count()
        let cancelledFired = Count()
        // A timer may come due before the loop below reaches its cancel (a loaded machine stalls it), and
        // its work then runs after the cancel returned. A timer whose cancel returned before its deadline
        // (read on the same monotonic clock: the thread never takes work early) must never fire.
        let cancelledInTime = Mutex(Set<Int>())
        var generator = SystemRandomNumberGenerator()
        var cancelled: [(deadline: Timestamp, timer: ScheduledTimer)] = []
        for index in 0..<300 {
            _ = clock.schedule(at: clock.now().adding(.milliseconds(Int64.random(in: 0...200, using: &generator)))) { fired.add() }
            let deadline = clock.now().adding(.milliseconds(Int64.random(in: 100...300, using: &generator)))
            cancelled.append((deadline, clock.schedule(at: deadline) { if cancelledInTime.withLock({ $0.contains(index) }) { cancelledFired.add() } }))
        }
        for (index, (deadline, timer)) in cancelled.enumerated() {
            timer.cancel()
            if clock.now() < deadline { cancelledInTime.withLock { _ = $0.insert(index) } }
        }
        for _ in 0..<60_000 where fired.current < 300 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(400))
        expectEqual(fired.current, 300, "every timer fired once, though one due in an hour was waited for first")
        expectEqual(cancelledFired.current, 0, "no timer cancelled before its deadline fired")
        far.cancel()
    }

    @Test func theLiveSourceDrawsEveryByte() {
        let source = SystemRandomSource()
        for count in [0, 1, 7, 8, 9, 32, 33] { #expect(source.bytes(count).count == count) }
        // 64 draws of 32 bytes: every byte position takes many values (a byte left at zero would not).
        let draws = (0..<64).map { _ in source.bytes(32) }
        for position in 0..<32 { #expect(Set(draws.map { $0[position] }).count > 16, "position \(position)") }
    }

    // MARK: - Wall-clock steps

    /// A wall clock a test steps: the real one plus `offset` milliseconds.
    final class SteppedWallClock: Sendable {
        let offset = Mutex<Int64>(0)
        var now: Timestamp { Timestamp(milliseconds: Int64(Date().timeIntervalSince1970 * 1000) + offset.withLock { $0 }) }
    }

    /// The simulator's backend, but a login's session request steps the wall clock and is never answered.
    struct SteppingAtLoginBackend: EntitlementBackend {
        let inner: any EntitlementBackend
        let stepping: @Sendable () -> Void
        func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
            guard case .createSession = request else { return try await inner.perform(request) }
            stepping()
            try? await Task.sleep(for: .seconds(3_600))
            throw .timeout
        }
    }

    /// The wall clock stepped by an hour, either way, during a login while its session request waits
    /// for its deadline: the deadline is one second of monotonic time all the same — not passed at once
    /// (+1 h), not an hour away (−1 h) — and the clock reports the step.
    @Test(arguments: [Int64(3_600_000), -3_600_000])
    func aWallClockStepDuringALoginMovesNoDeadline(step: Int64) async throws {
        let wall = SteppedWallClock()
        let clock = SystemClock(wallClock: { wall.now })
        let simulator = Simulator(clock: ManualClock(), seed: 101)
        let backend = SteppingAtLoginBackend(inner: simulator.backend) { wall.offset.withLock { $0 = step } }
        let enabler = AccessEnabler(
            backend: backend,
            environment: EngineEnvironment(clock: clock, deviceID: "device-1", redirectStateRandom: SystemRandomSource()),
            settings: EngineSettings(requestTimeout: .seconds(1)))
        let configured = try await enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: []), within: .seconds(150))
        expectEqual(configured, .setRequestorComplete(success: true))
        await enabler.getAuthentication()
        let started = ContinuousClock.now
        let answer = try await enabler.answer(to: .setSelectedProvider("acme-cable"), within: .seconds(150))
        let waited = ContinuousClock.now - started
        expectEqual(answer, .setAuthenticationStatus(status: 0, errorCode: ErrorCode.genericAuthentication), "the login failed: \(answer)")
        #expect(waited >= .seconds(1), "the deadline did not come early: \(waited)")
        #expect(waited < .seconds(120), "the deadline did not move an hour away: \(waited)")
        let reported = clock.wallClockStep - .milliseconds(step)
        #expect(reported < .seconds(5) && reported > .seconds(-5), "the step is reported: \(clock.wallClockStep)")
    }

    /// Engine time only moves forward and follows the monotonic clock, whatever the wall clock does;
    /// a timer scheduled before a step fires after its monotonic delay.
    @Test func engineTimeFollowsTheMonotonicClockThroughSteps() async throws {
        let wall = SteppedWallClock()
        let clock = SystemClock(wallClock: { wall.now })
        let before = clock.now()
        let fired = Count()
        let started = ContinuousClock.now
        let timer = clock.schedule(at: before.adding(.milliseconds(300))) { fired.add() }
        wall.offset.withLock { $0 = -3_600_000 }
        let after = clock.now()
        #expect(after >= before && after.milliseconds(since: before) < 60_000, "engine time did not step back")
        for _ in 0..<3_000 where fired.current == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(fired.current == 1 && ContinuousClock.now - started >= .milliseconds(300))
        timer.cancel()
    }
}
