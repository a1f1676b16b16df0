/// Where the engine's measurements go: a small protocol shaped like swift-metrics' `Counter` and
/// `Timer` factories, so an adapter to it is a few lines (DocC: *Logs and metrics*).
public protocol EngineMetricsHandler: Sendable {
    /// Adds `amount` to the counter `label` with these dimensions.
    func increment(counter label: String, dimensions: [(String, String)], by amount: Int64)
    /// Records one duration of the timer `label` with these dimensions.
    func record(timer label: String, dimensions: [(String, String)], nanoseconds: Int64)
}
