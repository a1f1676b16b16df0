import EntitlementEngine
/// A trace as a readable transcript: one line per record, `>` for calls, `<` for callbacks,
/// `⇢`/`⇠` for backend traffic, `·` for the other inputs, with the clock relative to the start.
public enum TraceTranscript {
    /// The transcript of `trace`.
    public static func render(_ trace: Trace) -> String {
        let start = trace.header["start"]?.int ?? 0
        var lines = [
            "trace format \(trace.header["format"]?.string ?? "?") · engine \(trace.header["engine"]?.string ?? "?") · "
                + "recorded with \(trace.header["recorded_with"]?.string ?? "?") · device \(trace.deviceID)"
        ]
        for record in trace.records {
            let seq = String(record["seq"]?.int ?? 0)
            let clock = record["t"]?.int.map { "+\(Saturating.subtract($0, start) / 1000)s" } ?? ""
            lines.append(pad(seq, 4) + " " + pad(clock, 8) + " " + describe(record))
        }
        return lines.joined(separator: "\n")
    }

    /// Values as JSON, with MVPD objects shortened to their ids and configurations to a summary.
    private static func brief(_ value: JSONValue) -> String {
        if let id = value["id"]?.string, value["displayName"] != nil { return id }
        if let items = value.array, !items.isEmpty, items.allSatisfy({ $0["displayName"] != nil }) {
            return "[" + items.map(brief).joined(separator: ", ") + "]"
        }
        if let requestor = value["requestor"]?.string, let mvpds = value["mvpds"]?.array {
            return "\(requestor) with \(mvpds.count) MVPDs"
        }
        return value.canonicalText
    }

    private static func pad(_ text: String, _ width: Int) -> String {
        text.count >= width ? text : String(repeating: " ", count: width - text.count) + text
    }

    static func describe(_ record: JSONValue) -> String {
        guard let members = record.object else { return record.canonicalText }
        let rest = members.filter { !["seq", "t", "in", "out", "call", "callback", "id", "answers", "op", "operation"].contains($0.key) }
        let arguments = Redactor.redact(rest.keys.sorted().map { "\($0): \(brief(rest[$0]!))" }.joined(separator: ", "))
        switch (record["in"]?.string, record["out"]?.string) {
        case ("call", _):
            return "#\(record["id"]?.int ?? 0) > \(record["call"]?.string ?? "?")(\(arguments))"
        case ("callNotSaved", _):
            return "#\(record["id"]?.int ?? 0) > \(record["call"]?.string ?? "?") not saved (\(arguments))"
        case ("callNotRead", _):
            return "#\(record["id"]?.int ?? 0) > \(record["call"]?.string ?? "?") not decided: the store could not be read (\(arguments))"
        case (.some(let input), _) where input == "backendAnswered" || input == "backendFailed":
            return "⇠ op\(record["op"]?.int ?? 0) \(input) \(arguments)"
        case (.some(let input), _):
            return "· \(input) \(arguments)"
        case (_, "callback"):
            let answers = record["answers"]?.array?.compactMap(\.int) ?? []
            return "< \(record["callback"]?.string ?? "?")(\(arguments))"
                + (answers.isEmpty ? "" : "  answers " + answers.map { "#\($0)" }.joined(separator: ","))
        case (_, "request"):
            return "⇢ op\(record["op"]?.int ?? 0) \(record["operation"]?.string ?? "?") \(arguments)"
        default:
            return record.canonicalText
        }
    }
}
