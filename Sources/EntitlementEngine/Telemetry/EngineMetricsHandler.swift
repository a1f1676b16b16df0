/// Where the engine's measurements go: a small protocol shaped like swift-metrics' `Counter`,
/// `Timer` and `Gauge` factories, so an adapter to it is a few lines (DocC: *Logs and metrics*).
public protocol EngineMetricsHandler: Sendable {
    /// Adds `amount` to the counter `label` with these dimensions.
    func increment(counter label: String, dimensions: [(String, String)], by amount: Int64)
    /// Records one duration of the timer `label` with these dimensions.
    func record(timer label: String, dimensions: [(String, String)], nanoseconds: Int64)
    /// Sets the gauge `label` with these dimensions to `value` (a session host's resident and resting
    /// session counts).
    func record(gauge label: String, dimensions: [(String, String)], value: Int64)
}

extension EngineMetricsHandler {
    /// Ignores the gauge: a handler written before gauges existed still compiles.
    public func record(gauge label: String, dimensions: [(String, String)], value: Int64) {}
}
