import EntitlementEngine
/// Replays a ``Trace`` against today's machine: feeds every recorded input (at its recorded time)
/// to a fresh `EntitlementMachine` and compares every output it produces — callbacks and backend
/// requests — with the recorded ones, in order. Backend answers come from the trace: a recorded
/// response is fed once, at its place, to the request it answered.
///
/// The first mismatch stops the replay (never retried) with the step, the expected record, the
/// actual one and the records just before. Use ``replay(_:)`` for a result value or
/// ``replayOrThrow(_:)`` to throw a ``TraceDivergence``.
public struct TraceReplayer: Sendable {
    /// How many records before a divergence its report shows.
    package static let contextRecords = 4

    /// Whether the replay also holds each step's effects against the rows it took
    /// (``TraceReplayResult/effectsNotInRows``).
    package var checksRows: Bool

    /// Creates a replayer; with `checkingRows`, every step's effects must be named by its rows.
    public init(checkingRows: Bool = false) { checksRows = checkingRows }

    /// Replays `trace`; the result carries the divergence, if any.
    public func replay(_ trace: Trace) -> TraceReplayResult { replay(trace, observes: false) { _ in } }

    /// Replays `trace`, showing `observe` where the machine stands after each record that matched (its
    /// regions' states, and the rows an input took): what a page of the trace draws beside it.
    package func replay(_ trace: Trace, observing observe: (TraceReplayStep) -> Void) -> TraceReplayResult {
        replay(trace, observes: true, observe)
    }

    private func replay(_ trace: Trace, observes: Bool, _ observe: (TraceReplayStep) -> Void) -> TraceReplayResult {
        var run = Run(header: trace.header, requests: .recorded(trace.records.filter { $0["out"]?.string == "request" }))
        run.checksRows = checksRows
        run.machine.recordsTransitions = checksRows || observes
        var divergence: TraceDivergence?
        for (index, record) in trace.records.enumerated() {
            divergence = run.take(record, step: index + 1)
            if divergence != nil { break }
            if observes { observe(TraceReplayStep(seq: index + 1, machine: run.machine, isInput: record["in"] != nil)) }
        }
        if divergence == nil { divergence = run.end(records: trace.records.count) }
        return TraceReplayResult(
            recordsReplayed: run.replayed, divergence: divergence, machineMatches: trace.header["machine"]?.string == Trace.machineHash,
            effectsNotInRows: run.effectsNotInRows)
    }

    /// Replays the trace in the file at `path` as it reads it, one line at a time: memory stays flat
    /// however long the trace (a divergence's closest recorded request is looked for among the last
    /// `recentRequests` requests read). A malformed line throws the same ``TraceError`` as
    /// ``Trace/parse(_:)``, with its line number — possibly after earlier records were replayed.
    public func replay(contentsOfFile path: String) throws(TraceError) -> TraceReplayResult {
        var lines = try TraceLineReader(path: path)
        guard let first = try lines.next() else { throw TraceError(line: 1, reason: .noHeader) }
        let header = try Trace.checkHeader(try Trace.readLine(first, in: 0..<first.count, line: 1))
        var run = Run(header: header, requests: .recent([]))
        run.checksRows = checksRows
        run.machine.recordsTransitions = checksRows
        var count = 0
        var divergence: TraceDivergence?
        while let line = try lines.next() {
            count += 1
            // The output the machine produced, written as the recorder writes it, is most often the line
            // byte for byte: then the line is neither parsed nor compared field by field.
            if run.takeOutput(matching: line, step: count) { continue }
            let record = try Trace.readLine(line, in: 0..<line.count, line: count + 1)
            let input = try Trace.checkRecord(record, line: count + 1)
            divergence = run.take(record, input: input, step: count)
            if divergence != nil { break }
        }
        if divergence == nil { divergence = run.end(records: count) }
        return TraceReplayResult(
            recordsReplayed: run.replayed, divergence: divergence, machineMatches: header["machine"]?.string == Trace.machineHash,
            effectsNotInRows: run.effectsNotInRows)
    }

    /// How many of the latest recorded requests a streaming replay keeps to name the closest one.
    package static let recentRequests = 256

    /// Replays `trace`, throwing the first divergence.
    public func replayOrThrow(_ trace: Trace) throws(TraceDivergence) {
        if let divergence = replay(trace).divergence { throw divergence }
    }
}

/// Where the machine stands after one record of a replay.
package struct TraceReplayStep: Sendable, Hashable {
    /// One authorization under way: its resource and the state it is in.
    package struct Authorization: Sendable, Hashable {
        /// The resource being authorized.
        package var resource: String
        /// Its state in the authorization region (`AuthorizationRequest.Kind`).
        package var state: String
    }

    /// The record's `seq`: its place among the trace's records, from 1 (the header is not one).
    package var seq: Int
    /// The configuration region's state.
    package var configuration: String
    /// The authentication region's state.
    package var authentication: String
    /// Each authorization under way (the region is `idle` when there is none).
    package var authorizations: [Authorization]
    /// The rows the record took, when it was an input (`region: from --> to : input …`); empty for outputs.
    package var rows: [String]

    init(seq: Int, machine: EntitlementMachine, isInput: Bool) {
        self.seq = seq
        configuration = machine.configuration.kind.rawValue
        authentication = machine.authentication.kind.rawValue
        authorizations = machine.authorizations.map { Authorization(resource: $0.resource, state: $0.kind.rawValue) }
        rows = isInput ? machine.lastTransitions.map(\.description) : []
    }
}

/// The outcome of a replay.
public struct TraceReplayResult: Sendable {
    /// How many records matched before the end or the divergence.
    public var recordsReplayed: Int
    /// The first divergence, or nil when the whole trace replayed.
    public var divergence: TraceDivergence?
    /// Whether the trace was recorded by a machine with today's transition table (informational:
    /// a changed table may still replay, and behaviour is what is compared).
    public var machineMatches: Bool
    /// With `TraceReplayer/checksRows`: each step whose effects its rows do not all name — the input,
    /// the unnamed effects (`MachineStep.effectsNotInRows(_:)`) and the rows taken. Empty otherwise.
    public var effectsNotInRows: [String] = []
}

/// Where today's engine first did something else than the recorded one.
public struct TraceDivergence: Error, Sendable, CustomStringConvertible {
    /// The `seq` of the record where it diverged.
    public var step: Int
    /// The recorded record (canonical JSON), or a sentence when the trace had nothing there.
    public var expected: String
    /// What the engine produced instead (canonical JSON), or a sentence.
    public var actual: String
    /// The recorded records just before, oldest first.
    public var context: [String]
    /// The fields in which the two records differ (when both are records).
    public var differingFields: [String] = []
    /// For an unknown backend request: the closest recorded request.
    public var closestRecordedRequest: String?

    /// `step N: expected …, got …` with context.
    public var description: String {
        var lines = ["step \(step): expected \(expected)", "        got      \(actual)"]
        if !differingFields.isEmpty { lines.append("  differs in: \(differingFields.joined(separator: ", "))") }
        if let closestRecordedRequest { lines.append("  closest recorded request: \(closestRecordedRequest)") }
        if !context.isEmpty {
            lines.append("  records before:")
            lines += context.map { "    \($0)" }
        }
        return lines.joined(separator: "\n")
    }
}

/// The state of one replay, fed one recorded record at a time.
private struct Run {
    /// Whether each step's effects are held against the rows it took.
    var checksRows = false
    /// Where a divergence's closest recorded request is looked for.
    enum Requests {
        /// Every request of the trace (a trace in memory).
        case recorded([JSONValue])
        /// The latest requests read so far (a streamed trace).
        case recent([JSONValue])
    }

    var machine: EntitlementMachine
    var book: SecretBook
    var produced: [JSONValue] = []
    /// The machine's operation (with its owner) for each recorded operation number matched so far.
    var operations: [UInt64: OperationID] = [:]
    /// Operations the machine started that no recorded output has matched yet, by their own number.
    var started: [UInt64: OperationID] = [:]
    var replayed = 0
    var requests: Requests
    /// Steps whose effects their rows do not all name (only while the machine records its rows).
    var effectsNotInRows: [String] = []
    /// The records just before the current one (at most ``TraceReplayer/contextRecords``), oldest first.
    var recent: [JSONValue] = []

    init(header: JSONValue, requests: Requests) {
        let trace = Trace(header: header, records: [])
        machine = EntitlementMachine(settings: trace.settings, deviceID: trace.deviceID)
        book = SecretBook(keepingPersonalData: trace.keepsPersonalData)
        self.requests = requests
    }

    /// Takes the record numbered `step`: an input is fed to the machine, an output is compared with
    /// what the machine produced. The divergence, if this record is where it is. An input already
    /// decoded (while its line was checked) is given as `input`.
    mutating func take(_ record: JSONValue, input decoded: (Input, Timestamp)? = nil, step: Int) -> TraceDivergence? {
        if record["in"] != nil {
            if let extra = produced.first {
                return divergence(at: step, expected: record.canonicalText, actual: numbered(extra, step))
            }
            feed(record, decoded ?? (try? TraceCoding.decodeInput(record)), step: step)
        } else {
            noteIfRequest(record)
            guard !produced.isEmpty else { return divergence(at: step, expected: record.canonicalText, actual: "no output") }
            let actual = produced.removeFirst()
            if let mismatch = compare(expected: record, actual: actual, step: step) { return mismatch }
        }
        matched(record, step: step)
        return nil
    }

    /// Takes line `step` if it is, byte for byte, the next output the machine produced as the recorder
    /// would have written it (numbered `step`); false, changing nothing, otherwise.
    mutating func takeOutput(matching line: [UInt8], step: Int) -> Bool {
        guard let record = produced.first, record["seq"]?.int == Int64(step), record.canonicalBytes == line else { return false }
        produced.removeFirst()
        noteIfRequest(record)
        if let operation = record["op"]?.int, operation >= 0 {
            operations[UInt64(operation)] = started.removeValue(forKey: UInt64(operation)) ?? OperationID(UInt64(operation), owner: nil)
        }
        matched(record, step: step)
        return true
    }

    /// A recorded request is kept among the latest, to name the closest one at a divergence.
    private mutating func noteIfRequest(_ record: JSONValue) {
        guard case .recent(var latest) = requests, record["out"]?.string == "request" else { return }
        requests = .recent([])  // `latest` is then the only copy, changed in place
        latest.append(record)
        if latest.count > TraceReplayer.recentRequests { latest.removeFirst() }
        requests = .recent(latest)
    }

    /// Record `step` matched: it is the context of a later divergence.
    private mutating func matched(_ record: JSONValue, step: Int) {
        replayed = step
        recent.append(record)
        if recent.count > TraceReplayer.contextRecords { recent.removeFirst() }
    }

    /// The trace ended after `records` records: anything the machine still produced is a divergence.
    mutating func end(records: Int) -> TraceDivergence? {
        guard let extra = produced.first else { return nil }
        return divergence(at: records + 1, expected: "the end of the trace", actual: numbered(extra, records + 1))
    }

    /// Feeds input record `step` to the machine; what it produces is numbered as the records that
    /// follow it would be (an output is compared apart from its number, or as the bytes the recorder
    /// writes).
    private mutating func feed(_ record: JSONValue, _ decoded: (Input, Timestamp)?, step: Int) {
        guard let (input, time) = decoded else { return }
        note(record)
        let machineStep = machine.handle(remap(input), at: time)
        if checksRows {
            let unnamed = machineStep.effectsNotInRows(machine.lastTransitions)
            if !unnamed.isEmpty {
                effectsNotInRows.append(
                    "\(input.name): \(unnamed.joined(separator: ", ")) not in the rows [\(machine.lastTransitions.map(\.description).joined(separator: "; "))]")
            }
        }
        // Nothing waits in `produced` when an input is fed: the outputs are the records that follow it.
        for action in machineStep.effects {
            let seq = step + produced.count + 1
            switch action {
            case .emit(let callback, let answering):
                produced.append(TraceCoding.encode(callback, answering: answering, seq: seq, book: &book))
            case .callBackend(let operation, let request), .loadConfiguration(let operation, let request):
                started[operation.rawValue] = operation
                produced.append(TraceCoding.encode(operation, request, seq: seq, book: &book))
            case .askProvider(let operation, let provider, let request, _):
                started[operation.rawValue] = operation
                produced.append(TraceCoding.encodeProviderRequest(operation, provider: provider, request, seq: seq))
            case .startTimer(.retry(let operation), _), .startTimer(.stepUp(let operation), _), .checkPlatformSignIn(let operation, _, _, _):
                started[operation.rawValue] = operation
            case .startTimer, .cancelTimer, .cancelRequest, .log, .presentPlatformPicker, .dismissPlatformPicker:
                break
            }
        }
    }

    /// Notes the placeholders of an input record, so a value the machine derives from one (the
    /// tracking GUID of a concealed user id) is numbered as the recording numbered it.
    private mutating func note(_ value: JSONValue) {
        switch value {
        case .string(let text): book.notePlaceholders(in: text)
        case .array(let items): for item in items { note(item) }
        case .object(let members): for member in members.values { note(member) }
        default: break
        }
    }

    /// Recorded answers name the recorded operation by its number; today's engine may have numbered
    /// it otherwise, and only the machine knows which region owns it: the machine's own operation.
    private func remap(_ input: Input) -> Input {
        func mine(_ op: OperationID) -> OperationID { operations[op.rawValue] ?? started[op.rawValue] ?? op }
        return switch input {
        case .configurationLoaded(let op, let configuration, let stored, let others):
            .configurationLoaded(mine(op), configuration, stored, others: others)
        case .providerAnswered(let op, let result): .providerAnswered(mine(op), result)
        case .configurationFailed(let op, let error): .configurationFailed(mine(op), error)
        case .backendAnswered(let op, let response): .backendAnswered(mine(op), response)
        case .backendFailed(let op, let error): .backendFailed(mine(op), error)
        case .platformSignInChecked(let op, let assertion): .platformSignInChecked(mine(op), assertion)
        case .timerFired(.retry(let op)): .timerFired(.retry(mine(op)))
        case .timerFired(.stepUp(let op)): .timerFired(.stepUp(mine(op)))
        case .timerFired(.requestDeadline(let op)): .timerFired(.requestDeadline(mine(op)))
        default: input
        }
    }

    private mutating func compare(expected: JSONValue, actual: JSONValue, step: Int) -> TraceDivergence? {
        guard var expectedFields = expected.object, var actualFields = actual.object else { return nil }
        if Self.sameApartFromNumbering(expectedFields, actualFields) {
            if let recordedOperation = expectedFields["op"]?.int, let actualOperation = actualFields["op"]?.int,
                recordedOperation >= 0, actualOperation >= 0
            {
                operations[UInt64(recordedOperation)] =
                    started.removeValue(forKey: UInt64(actualOperation)) ?? OperationID(UInt64(actualOperation), owner: nil)
            }
            return nil
        }
        for numbering in ["seq", "op"] {
            expectedFields[numbering] = nil
            actualFields[numbering] = nil
        }
        var mismatch = divergence(at: step, expected: expected.canonicalText, actual: numbered(actual, step))
        let differing = Set(expectedFields.keys).union(actualFields.keys).filter { expectedFields[$0] != actualFields[$0] }
        // Records of different kinds differ everywhere: name the kind only.
        mismatch.differingFields = ["out", "callback", "operation"].first(where: differing.contains).map { [$0] }
            ?? differing.sorted()
        if actual["out"]?.string == "request" { mismatch.closestRecordedRequest = closestRequest(to: actualFields) }
        return mismatch
    }

    /// Whether two records hold the same fields but for their numbering (`seq`, `op`), read in place.
    private static func sameApartFromNumbering(_ expected: [String: JSONValue], _ actual: [String: JSONValue]) -> Bool {
        func counted(_ fields: [String: JSONValue]) -> Int {
            fields.count - (fields["seq"] == nil ? 0 : 1) - (fields["op"] == nil ? 0 : 1)
        }
        guard counted(expected) == counted(actual) else { return false }
        for (key, value) in expected where key != "seq" && key != "op" {
            guard actual[key] == value else { return false }
        }
        return true
    }

    /// An output record as it would have been numbered at `step`.
    private func numbered(_ record: JSONValue, _ step: Int) -> String {
        guard var members = record.object else { return record.canonicalText }
        members["seq"] = .int(Int64(step))
        return JSONValue.object(members).canonicalText
    }

    /// The recorded request sharing the most fields with `fields`.
    private func closestRequest(to fields: [String: JSONValue]) -> String? {
        let candidates: [JSONValue]
        switch requests {
        case .recorded(let all): candidates = all
        case .recent(let latest): candidates = latest
        }
        return candidates.max { score($0, fields) < score($1, fields) }?.canonicalText
    }

    private func score(_ record: JSONValue, _ fields: [String: JSONValue]) -> Int {
        guard let members = record.object else { return 0 }
        return fields.filter { members[$0.key] == $0.value }.count
    }

    private func divergence(at step: Int, expected: String, actual: String) -> TraceDivergence {
        TraceDivergence(step: step, expected: expected, actual: actual, context: recent.map(\.canonicalText))
    }
}
