import EntitlementEngine
import Synchronization

/// Records a session as a ``Trace``: pass one to `AccessEnabler` (`recorder:`). Off by default;
/// an engine without a recorder does no recording work at all.
///
/// Secrets are written as placeholders by a `SecretBook` as the records are made, so no secret
/// is ever held in the trace, written to a file or printed. So are personal data — the device's id,
/// profile attributes, user ids, metadata values, session ids and the tracking GUID — unless the
/// recorder keeps them (`keepingPersonalData`, for local debugging only).
///
/// With a ``TraceSink``, each line goes to the sink as it is made and nothing is kept: a long session
/// records in flat memory (only the secret book, one placeholder per secret, stays).
public final class TraceRecorder: EngineMonitor {
    private struct State {
        var header: JSONValue?
        var records: [JSONValue] = []
        var count = 0
        var book: SecretBook
    }

    private let state: Mutex<State>
    private let recordedWith: String
    private let sink: (any TraceSink)?

    /// Creates a recorder that keeps the trace in memory (``trace``); `recordedWith` names what
    /// recorded (written in the header); `keepingPersonalData` writes personal data in clear.
    public init(recordedWith: String = "AccessEnabler \(EngineVersion.current)", keepingPersonalData: Bool = false) {
        self.recordedWith = recordedWith
        self.sink = nil
        self.state = Mutex(State(book: SecretBook(keepingPersonalData: keepingPersonalData)))
    }

    /// Creates a recorder that writes each line of the trace's canonical form to `sink` as it is made
    /// (the header first) and keeps no records: ``trace`` then holds the header alone.
    public init(
        recordedWith: String = "AccessEnabler \(EngineVersion.current)", keepingPersonalData: Bool = false, streamingTo sink: any TraceSink
    ) {
        self.recordedWith = recordedWith
        self.sink = sink
        self.state = Mutex(State(book: SecretBook(keepingPersonalData: keepingPersonalData)))
    }

    /// Turns boundary events into records.
    public func observe(_ event: EngineEvent) {
        state.withLock { state in
            let seq = state.count + 1
            let record: JSONValue
            switch event {
            case .started(let settings, let deviceID, let now):
                state.header = [
                    "trace": "header", "format": .string(Trace.format), "engine": .string(EngineVersion.current),
                    "recorded_with": .string(recordedWith), "machine": .string(Trace.machineHash),
                    "start": .int(now.milliseconds), "device": .string(state.book.concealPersonal(deviceID, as: .device)),
                    "personalData": state.book.keepsPersonalData ? "kept" : "concealed", "settings": Trace.encode(settings),
                ]
                sink?.write(line: state.header?.canonicalText ?? "")
                return
            case .inputHandled(let handled, let now):
                record = TraceCoding.encode(handled.input, at: now, seq: seq, book: &state.book)
            case .callbackEmitted(let callback, let answering):
                record = TraceCoding.encode(callback, answering: answering, seq: seq, book: &state.book)
            case .backendRequested(let operation, let sent):
                record = TraceCoding.encode(operation, sent.request, seq: seq, book: &state.book)
            case .providerAsked(let operation, let provider, let request):
                record = TraceCoding.encodeProviderRequest(operation, provider: provider, request, seq: seq)
            case .callReceived, .backendFinished, .transition, .log, .storageFailed:
                return
            }
            state.count += 1
            if let sink { sink.write(line: record.canonicalText) } else { state.records.append(record) }
        }
    }

    /// How many records were made (written to the sink or kept).
    public var recordCount: Int { state.withLock { $0.count } }

    /// The trace so far (the header alone when streaming to a sink).
    public var trace: Trace {
        state.withLock { Trace(header: $0.header ?? ["trace": "header"], records: $0.records) }
    }
}
