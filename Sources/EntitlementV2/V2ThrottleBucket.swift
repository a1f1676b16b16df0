/// Adobe Pass's throttling as a token bucket (Adobe's *Throttling mechanism*): a burst of 10 requests on first
/// contact, then one more each second; over the limit a request gets HTTP 429 and the client must
/// wait at least a second. A pure value on the engine's clock: the simulator throttles with it, and
/// a client paces itself with it so that it never provokes a 429.
package struct V2ThrottleBucket: Sendable, Hashable {
    /// Requests allowed at once (10).
    package let burst: Int
    /// How long one token takes to come back (1 s).
    package let refill: Duration
    /// Tokens left, in thousandths (so partial refills are exact).
    private var milliTokens: Int64
    /// When the tokens were last counted.
    private var counted: Timestamp?

    /// A full bucket.
    package init(burst: Int = 10, refill: Duration = .seconds(1)) {
        self.burst = max(1, burst)
        self.refill = max(refill, .milliseconds(1))
        self.milliTokens = Int64(self.burst) * 1000
    }

    /// Takes a token at `now` when there is one (the request may go); false when over the limit.
    package mutating func take(at now: Timestamp) -> Bool {
        topUp(at: now)
        guard milliTokens >= 1000 else { return false }
        milliTokens -= 1000
        return true
    }

    /// How long from `now` until a token is there (zero when one is).
    package mutating func wait(at now: Timestamp) -> Duration {
        topUp(at: now)
        guard milliTokens < 1000 else { return .zero }
        // Thousandths of a token still missing, times the refill time, rounded up to a millisecond.
        let needed = Saturating.multiply(1000 - milliTokens, refill.milliseconds)
        return .milliseconds(needed / 1000 + (needed % 1000 == 0 ? 0 : 1))
    }

    private mutating func topUp(at now: Timestamp) {
        defer { counted = max(counted ?? now, now) }
        guard let counted, now > counted else { return }
        let elapsed = now.milliseconds(since: counted)
        let earned = Saturating.multiply(elapsed, 1000) / refill.milliseconds
        milliTokens = min(Int64(burst) * 1000, Saturating.add(milliTokens, earned))
    }
}
