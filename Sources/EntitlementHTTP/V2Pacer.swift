/// Paces requests per device (keyed as V2 keys its throttle: the public address, else the device
/// id): a token bucket, and a pause after a 429. Waiting is a cancellable sleep; idle devices' state
/// is dropped so a million devices do not stay in memory.
actor V2Pacer {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
        var pausedUntil: ContinuousClock.Instant?
    }

    let pacing: V2Pacing
    private var buckets: [String: Bucket] = [:]
    private let clock = ContinuousClock()
    private static let pruneAbove = 10_000

    init(pacing: V2Pacing) { self.pacing = pacing }

    /// Waits until `key` may send, then takes its turn. Throws when the waiting task is cancelled.
    func admit(_ key: String) async throws {
        while true {
            let now = clock.now
            var bucket = refreshed(key, now)
            if let until = bucket.pausedUntil, until > now {
                buckets[key] = bucket
                try await Task.sleep(until: until, clock: clock)
                continue
            }
            bucket.pausedUntil = nil
            guard let burst = pacing.burst else {
                buckets[key] = bucket
                return
            }
            if bucket.tokens >= 1 {
                bucket.tokens -= 1
                buckets[key] = bucket
                prune(now, burst: burst)
                return
            }
            buckets[key] = bucket
            let wait = pacing.interval * (1 - bucket.tokens)
            try await Task.sleep(until: now + wait, clock: clock)
        }
    }

    /// `key` was answered 429: it waits ``V2Pacing/pauseAfterThrottle`` and its bucket is empty.
    func throttled(_ key: String) {
        let now = clock.now
        var bucket = refreshed(key, now)
        bucket.tokens = 0
        bucket.pausedUntil = now + pacing.pauseAfterThrottle
        buckets[key] = bucket
    }

    private func refreshed(_ key: String, _ now: ContinuousClock.Instant) -> Bucket {
        let burst = Double(pacing.burst ?? 1)
        guard var bucket = buckets[key] else { return Bucket(tokens: burst, updated: now) }
        if pacing.interval > .zero {
            let earned = (now - bucket.updated) / pacing.interval
            bucket.tokens = min(burst, bucket.tokens + earned)
        } else {
            bucket.tokens = burst
        }
        bucket.updated = now
        return bucket
    }

    /// Forgets devices whose bucket is full again and who are not paused (they would start fresh).
    private func prune(_ now: ContinuousClock.Instant, burst: Int) {
        guard buckets.count > Self.pruneAbove else { return }
        buckets = buckets.filter { _, bucket in
            let full = bucket.tokens + (now - bucket.updated) / pacing.interval >= Double(burst)
            let paused = bucket.pausedUntil.map { $0 > now } ?? false
            return !full || paused
        }
    }
}
