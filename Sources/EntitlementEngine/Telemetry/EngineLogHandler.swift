/// Where the engine's log lines go: a small protocol shaped like swift-log's `LogHandler`, so an
/// adapter to it is a few lines (DocC: *Logs and metrics*). Lines never hold a secret: tokens,
/// codes and states are shortened before they get here.
public protocol EngineLogHandler: Sendable {
    /// One line at `level`, with `metadata` (`session`, `call`, `operation`, …).
    func log(level: LogLevel, message: String, metadata: [String: String])
}
