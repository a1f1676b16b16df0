import EntitlementEngine
import EntitlementSupport

/// A recorded session: one header line, then one record per boundary event, as JSON Lines in
/// canonical form (sorted keys, integer milliseconds, UTF-8, `\n` after every line).
///
/// Inputs (`"in"`): `call`, `options`, `configurationLoaded`, `configurationFailed`, `secretsDrawn`
/// (the random values a flow drew), `backendAnswered`, `backendFailed`, `timerFired` — each with
/// `t`, the injected clock's reading when the machine handled it. Outputs (`"out"`): `callback`
/// (with the calls it `answers`) and `request` (a backend request). Every record has `seq`, from 1.
/// Secrets are placeholders (`<state#1>`, `<media#2>`); see `SecretBook`. From format 2.1 personal data
/// are too (`<personal#1>`, `<device#1>`) unless the header's `personalData` says `kept`. From format 2.2
/// a request whose deadline passed is a `timerFired` of timer `requestDeadline` (with its `op`) — the
/// machine's own timer — where earlier traces hold the timeout as the request's failure (both replay). From
/// format 2.3 a host that stopped waiting for a provider choice is a `providerChoiceAbandoned` (with its `flow`).
public struct Trace: Sendable, Equatable {
    /// The major version this engine reads and writes; a trace with another major is refused.
    package static let formatMajor = 2
    /// The minor version this engine writes.
    package static let formatMinor = 3
    /// `major.minor`.
    package static var format: String { "\(formatMajor).\(formatMinor)" }

    /// The header: format, engine version, recorder, machine hash, start time, device and settings.
    package var header: JSONValue
    /// The records after the header, in order.
    package var records: [JSONValue]

    /// Creates a trace from its parts.
    package init(header: JSONValue, records: [JSONValue]) {
        self.header = header
        self.records = records
    }

    /// The trace in its one canonical byte form.
    public var text: String { ([header] + records).map { $0.canonicalText + "\n" }.joined() }

    /// A hash of the machine's transition table: a trace records which machine wrote it. Computed once
    /// per process (the table is fixed), not each time a recorder or replayer asks.
    package static let machineHash: String =
        Hex.encode(Array(SHA256.hash(TransitionTable.rows.map(\.description).joined(separator: "\n")).prefix(12)))

    // MARK: - Reading

    /// Reads a trace, refusing anything malformed with the line number and the reason.
    public static func parse(_ text: String) throws(TraceError) -> Trace {
        guard !text.isEmpty else { throw TraceError(line: 1, reason: .noHeader) }
        // Lines are found and read on the UTF-8 bytes: no Character is ever formed.
        let bytes = Array(text.utf8)
        let newline = UInt8(ascii: "\n")
        guard bytes.last == newline else {
            throw TraceError(line: bytes.count(where: { $0 == newline }) + 1, reason: .truncated)
        }
        var values: [JSONValue] = []
        var lineStart = 0
        for (offset, byte) in bytes.enumerated() where byte == newline {
            values.append(try readLine(bytes, in: lineStart..<offset, line: values.count + 1))
            lineStart = offset + 1
        }
        let header = try checkHeader(values[0])
        let records = Array(values.dropFirst())
        for (index, record) in records.enumerated() { try checkRecord(record, line: index + 2) }
        return Trace(header: header, records: records)
    }

    /// `value` if it is a header this engine reads (line 1 of a trace).
    static func checkHeader(_ header: JSONValue) throws(TraceError) -> JSONValue {
        guard header["trace"]?.string == "header", let format = header["format"]?.string else {
            throw TraceError(line: 1, reason: .noHeader)
        }
        guard format.split(separator: ".").first.flatMap({ Int($0) }) == formatMajor else {
            throw TraceError(line: 1, reason: .unsupportedFormat(format))
        }
        for field in ["engine", "recorded_with", "machine", "device"] where header[field]?.string == nil {
            throw TraceError(line: 1, reason: .field(field))
        }
        guard header["start"]?.int != nil else { throw TraceError(line: 1, reason: .field("start")) }
        guard header["settings"]?.object != nil else { throw TraceError(line: 1, reason: .field("settings")) }
        return header
    }

    /// Checks the record on `line` (its `seq` must be `line - 1`): numbered in order, an input or an
    /// output, and an input this engine can decode — which it returns, decoded, with its time (nil for
    /// an output), so a streamed replay decodes each input once.
    @discardableResult
    static func checkRecord(_ record: JSONValue, line: Int) throws(TraceError) -> (Input, Timestamp)? {
        guard let seq = record["seq"]?.int else { throw TraceError(line: line, reason: .field("seq")) }
        guard seq == Int64(line - 1) else { throw TraceError(line: line, reason: .sequence(expected: line - 1, found: seq)) }
        guard record["in"] != nil else {
            guard record["out"]?.string != nil else { throw TraceError(line: line, reason: .field("in")) }
            return nil
        }
        guard record["in"]?.string != nil else { throw TraceError(line: line, reason: .field("in")) }
        do throws(TraceError.Reason) {
            return try TraceCoding.decodeInput(record)
        } catch {
            throw TraceError(line: line, reason: error)
        }
    }

    /// Reads one line of a trace (without its newline) as a value, extensions dropped.
    static func readLine(_ bytes: [UInt8], in range: Range<Int>, line: Int) throws(TraceError) -> JSONValue {
        do throws(JSONReader.Failure) {
            return stripExtensions(try JSONReader.read(bytes, in: range))
        } catch {
            throw TraceError(line: line, reason: .notJSON(error.description))
        }
    }

    /// Drops fields whose names start with `_` (extensions other tools may add).
    private static func stripExtensions(_ value: JSONValue) -> JSONValue {
        // Most records have none: the record is kept as read, not copied.
        guard case .object(let members) = value, members.keys.contains(where: { $0.utf8.first == UInt8(ascii: "_") }) else { return value }
        return .object(members.filter { !$0.key.hasPrefix("_") })
    }

    // MARK: - Settings in the header

    static func encode(_ settings: EngineSettings) -> JSONValue {
        var members: [String: JSONValue] = [
            "redirectURL": .string(settings.redirectURL), "redirectTimeout": .int(settings.redirectTimeout.milliseconds),
            "queueLimit": .int(Int64(settings.queueLimit)), "deviceType": .string(settings.deviceType),
            "expiryLeeway": .int(settings.expiryLeeway.milliseconds),
            "preauthorizationLimit": .int(Int64(settings.preauthorizationLimit)),
            "preauthorizationCacheLifetime": .int(settings.preauthorizationCacheLifetime.milliseconds),
            "clientType": .string(settings.clientType), "operatingSystem": .string(settings.operatingSystem),
        ]
        // Written only when set, so traces of other devices read as before.
        if let domainName = settings.domainName { members["domainName"] = .string(domainName) }
        if settings.platformSSO { members["platformSSO"] = true }
        if !settings.providers.isEmpty {
            members["providers"] = .array(
                settings.providers.map { link in
                    var fields: [String: JSONValue] = ["id": .string(link.id)]
                    if link.requestsOneAtATime { fields["oneAtATime"] = true }
                    if link.signsIn { fields["signsIn"] = true }
                    if link.renewsTokens { fields["renews"] = true }
                    if let interval = link.verificationInterval { fields["verifyEvery"] = .int(interval.milliseconds) }
                    return .object(fields)
                })
        }
        if let stepUp = settings.stepUp {
            members["stepUp"] = [
                "resources": .array(stepUp.resources.sorted().map(JSONValue.string)), "timeout": .int(stepUp.timeout.milliseconds),
            ]
        }
        if let secondScreen = settings.secondScreen {
            members["secondScreen"] = [
                "pollInterval": .int(secondScreen.pollInterval.milliseconds),
                "codeLifetime": .int(secondScreen.codeLifetime.milliseconds),
            ]
        }
        return .object(members)
    }

    /// The domain a header without one stands for: engines before 0.8.0 sent `sim-app.example` by default
    /// and did not write it in the header; from 0.8.0 a header without one means none was set.
    private static func domainNameBefore080(_ header: JSONValue) -> String? {
        guard let engine = header["engine"]?.string else { return nil }
        let parts = engine.split(separator: ".").compactMap { Int($0) }
        guard parts.count >= 2 else { return nil }
        return (parts[0], parts[1]) < (0, 8) ? "sim-app.example" : nil
    }

    /// The engine settings the trace was recorded with.
    public var settings: EngineSettings {
        let value = header["settings"] ?? [:]
        var settings = EngineSettings(
            redirectURL: value["redirectURL"]?.string ?? "adobepass://ios.app",
            redirectTimeout: .milliseconds(value["redirectTimeout"]?.int ?? 600_000),
            queueLimit: Int(value["queueLimit"]?.int ?? 1024),
            expiryLeeway: .milliseconds(value["expiryLeeway"]?.int ?? 60_000),
            preauthorizationLimit: Int(value["preauthorizationLimit"]?.int ?? 5),
            preauthorizationCacheLifetime: .milliseconds(value["preauthorizationCacheLifetime"]?.int ?? 300_000),
            deviceType: value["deviceType"]?.string ?? "computer",
            clientType: value["clientType"]?.string ?? "swift", operatingSystem: value["operatingSystem"]?.string ?? "Linux")
        settings.domainName = value["domainName"]?.string ?? Self.domainNameBefore080(header)
        settings.platformSSO = value["platformSSO"] == .bool(true)
        if let stepUp = value["stepUp"] {
            settings.stepUp = StepUpSettings(
                resources: Set((stepUp["resources"]?.array ?? []).compactMap(\.string)),
                timeout: .milliseconds(stepUp["timeout"]?.int ?? 120_000))
        }
        settings.providers = (value["providers"]?.array ?? []).compactMap { link in
            link["id"]?.string.map {
                ProviderLink(
                    id: $0, requestsOneAtATime: link["oneAtATime"] == .bool(true), signsIn: link["signsIn"] == .bool(true),
                    renewsTokens: link["renews"] == .bool(true), verificationInterval: link["verifyEvery"]?.int.map { .milliseconds($0) })
            }
        }
        if let secondScreen = value["secondScreen"] {
            settings.secondScreen = SecondScreen(
                pollInterval: .milliseconds(secondScreen["pollInterval"]?.int ?? 5_000),
                codeLifetime: .milliseconds(secondScreen["codeLifetime"]?.int ?? 1_800_000))
        }
        return settings
    }

    /// The device the trace was recorded on (its placeholder where personal data are concealed).
    public var deviceID: String { header["device"]?.string ?? "" }

    /// Whether the trace holds personal data in clear: recorded keeping them (`"personalData":"kept"`),
    /// or before format 2.1, which did not conceal them.
    public var keepsPersonalData: Bool { header["personalData"]?.string != "concealed" }
}
