import Synchronization

/// Records a session as a ``Trace``: pass one to ``AccessEnabler`` (`recorder:`). Off by default;
/// an engine without a recorder does no recording work at all.
///
/// Secrets are written as placeholders by a ``SecretBook`` as the records are made, so no secret
/// is ever held in the trace, written to a file or printed.
public final class TraceRecorder: EngineMonitor {
    private struct State {
        var header: JSONValue?
        var records: [JSONValue] = []
        var book = SecretBook()
    }

    private let state = Mutex(State())
    private let recordedWith: String

    /// Creates a recorder; `recordedWith` names what recorded (written in the header).
    public init(recordedWith: String = "AccessEnabler \(EngineVersion.current)") { self.recordedWith = recordedWith }

    /// Turns boundary events into records.
    public func observe(_ event: EngineEvent) {
        state.withLock { state in
            let seq = state.records.count + 1
            switch event {
            case .started(let settings, let deviceID, let now):
                state.header = [
                    "trace": "header", "format": .string(Trace.format), "engine": .string(EngineVersion.current),
                    "recorded_with": .string(recordedWith), "machine": .string(Trace.machineHash),
                    "start": .int(now.milliseconds), "device": .string(deviceID), "settings": Trace.encode(settings),
                ]
            case .inputHandled(let input, let now):
                state.records.append(TraceCoding.encode(input, at: now, seq: seq, book: &state.book))
            case .callbackEmitted(let callback, let answering):
                state.records.append(TraceCoding.encode(callback, answering: answering, seq: seq, book: &state.book))
            case .backendRequested(let operation, let request):
                state.records.append(TraceCoding.encode(operation, request, seq: seq, book: &state.book))
            case .callReceived, .backendFinished, .transition, .log, .storageFailed:
                break
            }
        }
    }

    /// The trace so far.
    public var trace: Trace {
        state.withLock { Trace(header: $0.header ?? ["trace": "header"], records: $0.records) }
    }
}
