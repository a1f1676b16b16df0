/// How the HTTP transport keeps each device under REST API V2's throttle (Adobe's *Throttling mechanism*): a token
/// bucket per device (a burst, then a steady rate) that makes a request wait rather than provoke a
/// 429, and a pause of at least ``pauseAfterThrottle`` after a 429 all the same.
public struct V2Pacing: Sendable, Hashable {
    /// Requests a device may send at once before the steady rate applies (nil: no bucket).
    public var burst: Int?
    /// The steady rate's interval between requests.
    public var interval: Duration
    /// How long a device waits after a 429 before its next request.
    public var pauseAfterThrottle: Duration

    /// Creates pacing.
    public init(burst: Int?, interval: Duration, pauseAfterThrottle: Duration) {
        self.burst = burst.map { max($0, 1) }
        self.interval = max(interval, .zero)
        self.pauseAfterThrottle = max(pauseAfterThrottle, .zero)
    }

    /// V2's documented throttle: a burst of 10, then one request a second; one second after a 429.
    public static let adobe = V2Pacing(burst: 10, interval: .seconds(1), pauseAfterThrottle: .seconds(1))

    /// No bucket (a service that does not throttle, or tests), but still one second after a 429.
    public static let afterThrottleOnly = V2Pacing(burst: nil, interval: .zero, pauseAfterThrottle: .seconds(1))
}
