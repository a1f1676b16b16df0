import Synchronization

/// Logs and metrics from an engine's boundary events: attach it as the engine's monitor
/// (`AccessEnabler(…, monitor: EngineTelemetry(session: key, logger: …, metrics: …))`).
///
/// Counters: `entitle.calls` (`call`), `entitle.callbacks` (`callback`), `entitle.backend.requests`
/// (`operation`), `entitle.backend.responses` (`operation`, `outcome`: `success`, `network`,
/// `timeout`, `http`, `throttled`, `retryable`, `malformed`, `authentication`, `denied`),
/// `entitle.storage.failures`. Timers: `entitle.backend.latency` (`operation`, `outcome`);
/// `entitle.call.duration` (`call`, `outcome`: `success`, `failure`, `refused` or `answered`), from a call
/// to the callback that ends it — a whole login, authorization or logout as the device waited for it;
/// `entitle.mailbox.wait`, how long work waited in the engine's mailbox, with the gauge
/// `entitle.mailbox.depth` (what waited behind it). Every log line carries `session` and, where there
/// is one, `call` or `operation`; secrets are shortened.
public final class EngineTelemetry: EngineMonitor {
    /// The session every line and measurement is tagged with: name the device by its pseudonym
    /// (``DevicePseudonym/of(_:)``, or a `SessionKey`'s description), never by its id.
    package let session: String
    private let logger: (any EngineLogHandler)?
    private let metrics: (any EngineMetricsHandler)?
    /// What starts the engine's spans (``EngineTracer``), if any.
    public let tracer: (any EngineTracer)?
    private let minimumLevel: LogLevel
    private let started = Mutex<[OperationID: (operation: String, at: ContinuousClock.Instant)]>([:])
    private let calls = Mutex<[CallID: (call: String, at: ContinuousClock.Instant)]>([:])

    /// Telemetry for `session`; lines below `minimumLevel` are not built at all; `tracer` starts a span
    /// around each backend request and storage operation.
    public init(
        session: String, logger: (any EngineLogHandler)? = nil, metrics: (any EngineMetricsHandler)? = nil,
        tracer: (any EngineTracer)? = nil, minimumLevel: LogLevel = .info
    ) {
        self.session = session
        self.logger = logger
        self.metrics = metrics
        self.tracer = tracer
        self.minimumLevel = minimumLevel
    }

    /// Turns one boundary event into log lines and measurements.
    public func observe(_ event: EngineEvent) {
        switch event {
        case .started(_, let deviceID, _):
            log(.debug, "engine started", ["device": DevicePseudonym.of(deviceID)])
        case .callReceived(let id, let call):
            if metrics != nil { calls.withLock { $0[id] = (call.name, ContinuousClock.now) } }
            metrics?.increment(counter: "entitle.calls", dimensions: [("call", call.name)], by: 1)
            log(.debug, "> \(call.redactedDescription)", ["call": id.description])
        case .callbackEmitted(let callback, let answering):
            metrics?.increment(counter: "entitle.callbacks", dimensions: [("callback", callback.name)], by: 1)
            if let metrics, !answering.isEmpty { recordDurations(of: answering, endedBy: callback, on: metrics) }
            var level = LogLevel.debug
            if case .status(let report) = callback {
                level = report.level == .error ? .error : report.level == .warning ? .warning : .notice
            }
            log(level, "< \(callback.redactedDescription)", answering.isEmpty ? [:] : ["call": answering.map(\.description).joined(separator: ",")])
        case .backendRequested(let operation, let request):
            started.withLock { $0[operation] = (request.operation.rawValue, ContinuousClock.now) }
            metrics?.increment(counter: "entitle.backend.requests", dimensions: [("operation", request.operation.rawValue)], by: 1)
            log(.debug, "→ \(request.operation.rawValue)", ["operation": operation.description])
        case .providerAsked(let operation, let provider, let request):
            metrics?.increment(counter: "entitle.provider.requests", dimensions: [("provider", provider), ("request", request.name)], by: 1)
            log(.debug, "→ provider \(provider): \(request.redactedDescription)", ["operation": operation.description])
        case .backendFinished(let operation, let result):
            guard let begun = started.withLock({ $0.removeValue(forKey: operation) }) else { return }
            let outcome = Self.outcome(result.error)
            let dimensions = [("operation", begun.operation), ("outcome", outcome)]
            metrics?.increment(counter: "entitle.backend.responses", dimensions: dimensions, by: 1)
            metrics?.record(timer: "entitle.backend.latency", dimensions: dimensions, nanoseconds: (ContinuousClock.now - begun.at).nanoseconds)
            if let error = result.error {
                log(.warning, "← \(begun.operation) failed: \(Redactor.redact(error.summary))", ["operation": operation.description])
            } else {
                log(.debug, "← \(begun.operation)", ["operation": operation.description])
            }
        case .storageFailed(let why):
            metrics?.increment(counter: "entitle.storage.failures", dimensions: [], by: 1)
            log(.error, "token storage failed: \(Redactor.redact(why))", [:])
        case .log(let line):
            log(line.level, Redactor.redact(line.description), [:])
        case .transition(let row):
            log(.trace, "↳ \(row)", [:])
        case .inputHandled(let input, _):
            log(.trace, "· \(input.name)", [:])
        }
    }

    /// Records the mailbox's reading.
    public func observe(mailboxWait wait: Duration, behind: Int) {
        guard let metrics else { return }
        metrics.record(timer: "entitle.mailbox.wait", dimensions: [], nanoseconds: wait.nanoseconds)
        metrics.record(gauge: "entitle.mailbox.depth", dimensions: [], value: Int64(behind))
    }

    /// Times each call `callback` ends, from when it was received.
    private func recordDurations(of answered: [CallID], endedBy callback: Callback, on metrics: any EngineMetricsHandler) {
        let now = ContinuousClock.now
        let ended = calls.withLock { calls in answered.compactMap { calls.removeValue(forKey: $0) } }
        let outcome = Self.outcome(of: callback)
        for call in ended {
            metrics.record(
                timer: "entitle.call.duration", dimensions: [("call", call.call), ("outcome", outcome)],
                nanoseconds: (now - call.at).nanoseconds)
        }
    }

    /// The `outcome` dimension of the callback that ends a call.
    static func outcome(of callback: Callback) -> String {
        switch callback {
        case .setAuthenticationStatus(let status, _): status == 1 ? "success" : "failure"
        case .setToken, .preauthorizedResources, .setMetadataStatus: "success"
        case .tokenRequestFailed: "failure"
        case .status(let report) where report.level == .error: "refused"
        default: "answered"
        }
    }

    /// The `outcome` dimension of a finished request.
    static func outcome(_ error: BackendError?) -> String {
        guard let error else { return "success" }
        return switch error.code {
        case .network: "network"
        case .timeout: "timeout"
        case .httpStatus: "http"
        case .throttled: "throttled"
        case .retryable: "retryable"
        case .malformedResponse: "malformed"
        case .authenticationRequired: "authentication"
        case .denied: "denied"
        case .storageUnavailable: "storage"
        default: error.code.description
        }
    }

    /// Writes one line when its level is enabled; message and metadata are built only then.
    private func log(_ level: LogLevel, _ message: @autoclosure () -> String, _ metadata: @autoclosure () -> [String: String]) {
        guard let logger, level >= minimumLevel else { return }
        var all = metadata()
        all["session"] = session
        logger.log(level: level, message: message(), metadata: all)
    }
}
