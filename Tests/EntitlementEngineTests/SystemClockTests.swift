import EntitlementEngine
import Synchronization
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
        #expect(fired.current == 1, "the due timer fired once; the cancelled one never")
    }

    @Test func manyTimersEachFireOnceUnlessCancelledAndASoonerOneIsNotHeldBehindALaterOne() async throws {
        let clock = SystemClock()
        let far = clock.schedule(at: clock.now().adding(.seconds(3_600))) {}
        try await Task.sleep(for: .milliseconds(100))  // the timer thread now waits for the far one
        let fired = Count()
        let cancelledFired = Count()
        var generator = SystemRandomNumberGenerator()
        var cancelled: [ScheduledTimer] = []
        for _ in 0..<300 {
            _ = clock.schedule(at: clock.now().adding(.milliseconds(Int64.random(in: 0...200, using: &generator)))) { fired.add() }
            cancelled.append(clock.schedule(at: clock.now().adding(.milliseconds(Int64.random(in: 100...300, using: &generator)))) { cancelledFired.add() })
        }
        for timer in cancelled { timer.cancel() }
        for _ in 0..<1_000 where fired.current < 300 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(400))
        #expect(fired.current == 300, "every timer fired once, though one due in an hour was waited for first")
        #expect(cancelledFired.current == 0)
        far.cancel()
    }

    @Test func theLiveSourceDrawsEveryByte() {
        let source = SystemRandomSource()
        for count in [0, 1, 7, 8, 9, 32, 33] { #expect(source.bytes(count).count == count) }
        // 64 draws of 32 bytes: every byte position takes many values (a byte left at zero would not).
        let draws = (0..<64).map { _ in source.bytes(32) }
        for position in 0..<32 { #expect(Set(draws.map { $0[position] }).count > 16, "position \(position)") }
    }
}
