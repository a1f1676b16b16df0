import EntitlementTestSupport
import Testing

@testable import EntitlementHTTP

@Suite("Pacing a device under V2's throttle")
struct V2PacerTests {
    @Test func aBurstGoesAtOnceThenTheSteadyRateApplies() async throws {
        // A 5 s interval: "not paced" (well under it) stays true while the suite's start holds tests back.
        let pacer = V2Pacer(pacing: V2Pacing(burst: 3, interval: .seconds(5), pauseAfterThrottle: .milliseconds(300)))
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<3 { try await pacer.admit("tv") }
        #expect(clock.now - start < .milliseconds(4_500), "the burst is not paced")
        try await pacer.admit("tv")
        #expect(clock.now - start >= .milliseconds(4_950), "one more waits an interval")
        let other = clock.now
        try await pacer.admit("phone")
        #expect(clock.now - other < .milliseconds(4_500), "each device has its own bucket")
    }

    @Test func aThrottledDeviceWaitsThePauseEvenWithoutABucket() async throws {
        let pacer = V2Pacer(pacing: V2Pacing(burst: nil, interval: .zero, pauseAfterThrottle: .milliseconds(250)))
        let clock = ContinuousClock()
        try await pacer.admit("tv")
        await pacer.throttled("tv")
        let start = clock.now
        try await pacer.admit("tv")
        #expect(clock.now - start >= .milliseconds(240))
    }

    @Test func waitingEndsWhenTheTaskIsCancelled() async {
        let pacer = V2Pacer(pacing: V2Pacing(burst: 1, interval: .seconds(3600), pauseAfterThrottle: .zero))
        try? await pacer.admit("tv")
        let waiting = Task { try await pacer.admit("tv") }
        try? await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func theDefaultIsAdobesThrottle() {
        expectEqual(V2Pacing.adobe, V2Pacing(burst: 10, interval: .seconds(1), pauseAfterThrottle: .seconds(1)))
    }
}
