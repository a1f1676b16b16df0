import EntitlementEngine

/// One exchange of a ``HTTPV2Transport`` with the service, as its log and metrics see it: what
/// was asked, for which session, how it ended, and where its time went — waiting in the pacer (V2's
/// throttle), waiting for a connection (the transport's `HTTPV2Transport/connectionsPerHost`
/// were all busy), and the service's own time. "Is Adobe slow, or are we queueing?" is the difference
/// between ``service`` and ``connectionWait``.
public struct V2Exchange: Sendable, Hashable, CustomStringConvertible {
    /// How an exchange ended.
    public enum Outcome: Sendable, Hashable {
        /// The service answered with this HTTP status.
        case status(Int)
        /// No answer: the transport's failure, described without the URL.
        case failed(BackendError)
    }

    /// The HTTP method.
    public var method: String
    /// V2's operation (`createSession`, `authorize`, `accessToken`, `registerClient`, …).
    public var operation: String
    /// The path and query, its secrets shortened (`Redactor.redact(_:)`).
    public var target: String
    /// The device the request was for, by its pseudonym (`DevicePseudonym`); empty when none was named
    /// (registration, access tokens).
    public var session: String
    /// How it ended.
    public var outcome: Outcome
    /// Time spent waiting in the pacer before the request could be sent.
    public var pacing: Duration
    /// Time spent waiting for one of the host's connections.
    public var connectionWait: Duration
    /// The exchange itself: from sending the request to the last byte of its answer (or its failure).
    public var service: Duration

    /// Creates a record.
    public init(
        method: String, operation: String, target: String, session: String, outcome: Outcome, pacing: Duration,
        connectionWait: Duration, service: Duration
    ) {
        self.method = method
        self.operation = operation
        self.target = target
        self.session = session
        self.outcome = outcome
        self.pacing = pacing
        self.connectionWait = connectionWait
        self.service = service
    }

    /// The status as a metric dimension: the HTTP status, or the failure's kind (`timeout`, `network`).
    public var outcomeName: String {
        switch outcome {
        case .status(let status): String(status)
        case .failed(let error): error.code.description
        }
    }

    /// How loud a log line for it is: `debug` for an answer below 400, `info` for another 4xx (V2 answers
    /// a client error for ordinary conditions), `warning` for 429, a 5xx or no answer at all.
    public var level: LogLevel {
        switch outcome {
        case .status(let status) where status < 400: .debug
        case .status(let status) where status < 500 && status != 429: .info
        default: .warning
        }
    }

    /// `POST /api/v2/sp/sessions → 201 in 12 ms (pacer 0 ms, connection 3 ms) dev-…`.
    public var description: String {
        let ending =
            switch outcome {
            case .status(let status): "→ \(status)"
            case .failed(let error): "✗ \(error.summary)"
            }
        let who = session.isEmpty ? "" : " \(session)"
        return "\(method) \(target) \(ending) in \(service.milliseconds) ms "
            + "(pacer \(pacing.milliseconds) ms, connection \(connectionWait.milliseconds) ms)\(who)"
    }
}
