/// Observes everything that crosses the engine's boundary, in order: calls, callbacks (with the
/// calls each one answers), backend traffic and debug-log events. Tests use it to check the
/// exactly-once rule; traces and debug logs build on it.
///
/// Events carry raw values, secrets included (as the delegate does); use
/// ``EngineEvent/redactedDescription`` for anything written down.
public protocol EngineMonitor: Sendable {
    /// Called on the engine's actor, in order, for every event.
    func observe(_ event: EngineEvent)

    /// Called on the engine's actor as each piece of work leaves the engine's mailbox: how long it
    /// waited there and how many wait behind it (a default does nothing).
    func observe(mailboxWait wait: Duration, behind: Int)

    /// What starts spans around the engine's backend requests and storage operations (a default has none).
    var tracer: (any EngineTracer)? { get }
}

extension EngineMonitor {
    /// Does nothing.
    public func observe(mailboxWait wait: Duration, behind: Int) {}

    /// None.
    public var tracer: (any EngineTracer)? { nil }
}

/// One boundary event.
public enum EngineEvent: Sendable {
    /// The engine was created with these settings, for this device, at this time.
    case started(EngineSettings, deviceID: String, at: Timestamp)
    /// The machine handled an input at this time (the clock reading it was given).
    case inputHandled(HandledInput, at: Timestamp)
    /// A public call was received and given an id.
    case callReceived(CallID, EntitlementCall)
    /// A callback was emitted; `answering` lists the calls it ends (empty for non-terminal callbacks).
    case callbackEmitted(Callback, answering: [CallID])
    /// A backend request was sent.
    case backendRequested(OperationID, SentRequest)
    /// A backend request finished.
    case backendFinished(OperationID, RequestOutcome)
    /// A provider of the chain was asked something (credentials for a resource, a verification, …).
    case providerAsked(OperationID, provider: String, ProviderRequest)
    /// The machine took a transition (reported only when a monitor is attached).
    case transition(TransitionRow)
    /// The machine logged something (late results, joins).
    case log(EngineLog)
    /// Token storage failed; the engine carries on with its in-memory state.
    case storageFailed(String)

    /// One log line with secrets shortened.
    public var redactedDescription: String {
        switch self {
        case .started(_, let deviceID, let now): "engine started for \(DevicePseudonym.of(deviceID)) at \(now)"
        case .inputHandled(let input, let now): "  · \(input.name) at \(now)"
        case .callReceived(let id, let call): "\(id) > \(call.redactedDescription)"
        case .callbackEmitted(let callback, let answering):
            "< \(callback.redactedDescription)" + (answering.isEmpty ? "" : "  answers \(answering.map(\.description).joined(separator: ","))")
        case .backendRequested(let operation, let request): "\(operation) → backend \(request.operation.rawValue)"
        case .backendFinished(let operation, let outcome):
            if let error = outcome.error { "\(operation) ← backend failed: \(Redactor.redact(error.summary))" } else { "\(operation) ← backend answered" }
        case .providerAsked(let operation, let provider, let request): "\(operation) → provider \(provider): \(request.redactedDescription)"
        case .transition(let row): "  ↳ \(row)"
        case .log(let log): "· \(Redactor.redact(log.description))"
        case .storageFailed(let why): "· token storage failed: \(Redactor.redact(why))"
        }
    }
}

/// An input the machine handled: its name as the transition table's rows name it. What it carries
/// stays inside the package (traces record it for replay).
public struct HandledInput: Sendable, CustomStringConvertible {
    /// The input itself.
    package let input: Input

    package init(_ input: Input) { self.input = input }

    /// The input's name in rows: a call's name (`getAuthorization`) or the input's case (`backendAnswered`).
    public var name: String { input.name }

    /// The input's name.
    public var description: String { input.name }
}

/// A request the engine sent to the entitlement service: its operation by name. What it carries stays
/// inside the package (traces record it, concealed).
public struct SentRequest: Sendable, CustomStringConvertible {
    /// The request itself.
    package let request: BackendRequest

    package init(_ request: BackendRequest) { self.request = request }

    /// The REST API V2 operation asked for.
    public var operation: BackendOperation { request.operation }

    /// The operation's name.
    public var description: String { request.operation.rawValue }
}

/// How a request to the entitlement service ended: its error, or an answer whose content stays inside
/// the package (traces record it, concealed).
public struct RequestOutcome: Sendable {
    /// The answer or the error.
    package let result: Result<BackendResponse, BackendError>

    package init(_ result: Result<BackendResponse, BackendError>) { self.result = result }

    /// Why the request failed; nil when the service answered.
    public var error: BackendError? {
        if case .failure(let error) = result { error } else { nil }
    }
}

/// An engine's monitor behind one reference: asking whether there is one is a pointer test, and
/// observing copies nothing (a monitor is any `Sendable` type, so an optional one held inline is tested
/// and copied through its type's witnesses on every input).
final class MonitorReference: Sendable {
    let monitor: any EngineMonitor

    init(_ monitor: any EngineMonitor) { self.monitor = monitor }

    /// ``EngineMonitor/observe(_:)``.
    func observe(_ event: EngineEvent) { monitor.observe(event) }

    /// ``EngineMonitor/observe(mailboxWait:behind:)``.
    func observe(mailboxWait wait: Duration, behind: Int) { monitor.observe(mailboxWait: wait, behind: behind) }

    /// ``EngineMonitor/tracer``.
    var tracer: (any EngineTracer)? { monitor.tracer }
}
