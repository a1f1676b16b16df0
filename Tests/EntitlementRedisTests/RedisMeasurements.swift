import EntitlementEngine
import Synchronization

/// The measurements a Redis client reported, by `label dimension=value …`.
final class RedisMeasurements: EngineMetricsHandler {
    private let counters = Mutex<[String: Int64]>([:])
    private let timers = Mutex<[String: Int]>([:])

    static func key(_ label: String, _ dimensions: [(String, String)]) -> String {
        ([label] + dimensions.map { "\($0.0)=\($0.1)" }).joined(separator: " ")
    }

    func increment(counter label: String, dimensions: [(String, String)], by amount: Int64) {
        counters.withLock { $0[Self.key(label, dimensions), default: 0] += amount }
    }

    func record(timer label: String, dimensions: [(String, String)], nanoseconds: Int64) {
        timers.withLock { $0[Self.key(label, dimensions), default: 0] += 1 }
    }

    /// A counter's total (0 when never counted).
    func count(_ key: String) -> Int64 { counters.withLock { $0[key] ?? 0 } }

    /// How many times a timer was recorded.
    func timings(_ key: String) -> Int { timers.withLock { $0[key] ?? 0 } }

    /// Every key seen, for a readable failure.
    var keys: [String] { counters.withLock { Array($0.keys) } + timers.withLock { Array($0.keys) } }
}
