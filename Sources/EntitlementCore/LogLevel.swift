/// How much a log line matters, with swift-log's levels (so an adapter maps them one to one).
public enum LogLevel: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Every step (transitions, inputs).
    case trace
    /// Calls, callbacks, backend requests; an engine started (one a session: a host starts millions).
    case debug
    /// A backend request failed and is retried.
    case info
    /// Something the app should know (a refusal, a notice).
    case notice
    /// Something went wrong for one call (a failed request, a warning status).
    case warning
    /// Something went wrong that costs more than a call (storage failed, an error status).
    case error
    /// Unused by the engine; there for adapters.
    case critical

    /// Orders levels from `trace` to `critical`.
    public static func < (lhs: LogLevel, rhs: LogLevel) -> Bool { lhs.rank < rhs.rank }

    /// The level's place, `trace` first (checked for every event: no search).
    private var rank: Int {
        switch self {
        case .trace: 0
        case .debug: 1
        case .info: 2
        case .notice: 3
        case .warning: 4
        case .error: 5
        case .critical: 6
        }
    }
}
