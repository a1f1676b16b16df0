import EntitlementEngine
import EntitlementSimulator

/// Parses scenario scripts. Strict: an unknown word, a missing argument, a wrong number of
/// callback arguments, a declaration after the first step — each is refused with
/// `file:line:column`, and every such line of a script is reported, not only the first.
public enum ScenarioParser {
    /// How many steps a script may have once its `repeat` blocks are unrolled.
    package static let stepLimit = 100_000

    /// Parses `text`, naming `file` in errors and reports.
    public static func parse(_ text: String, file: String) throws(ScenarioParseError) -> Scenario {
        var scenario = Scenario(
            file: file, world: .default, settings: .simulated, deviceID: "device-1", ignored: [],
            allowsPendingCalls: false, steps: [])
        // A script counts the saves its store refuses for a moment (`storage is unavailable for N
        // saves`); the pauses between attempts are real time, so the window is the longest there is:
        // a loaded machine must not turn N passing failures into a failed save.
        scenario.settings.storageRetryWindow = .seconds(60)
        var sawHeader = false
        var problems: [ScenarioParseError] = []
        var omitted = 0
        var blocks = Blocks()
        func report(_ line: Int, _ column: Int, _ message: String) {
            if problems.count < ScenarioParseError.reportLimit {
                problems.append(ScenarioParseError(file: file, line: line, column: column, message: message))
            } else {
                omitted += 1
            }
        }
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = offset + 1
            let content = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            let trimmed = content.drop { $0 == " " || $0 == "\t" }
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let indent = content.count - trimmed.count
            do throws(ScenarioParseError.Reason) {
                if let sigil = trimmed.first, ">!<⇢".contains(sigil) {
                    var cursor = TokenCursor(
                        try ScenarioLexer.tokens(trimmed.dropFirst(), startColumn: indent + 2),
                        endColumn: content.count + 1)
                    let engine = try addressedEngine(&cursor, scenario)
                    var step: Step? = Step(line: line, text: String(trimmed), kind: .expectNothing)
                    switch sigil {
                    case ">":
                        let call = try call(&cursor)
                        step?.kind = .call(call)
                        // What the user typed is a secret: reports show which fields, never their values.
                        if case .signIn(let provider, let credentials) = call {
                            step?.text = Self.concealedSignIn(provider, credentials: credentials, engine: engine)
                        }
                    case "<": step = try expectationLine(&cursor, line: line, text: String(trimmed), engine: engine, &blocks)
                    case "⇢":
                        let (expectation, toProvider) = try request(&cursor)
                        if toProvider { scenario.checksProviderRequests = true } else { scenario.checksBackendRequests = true }
                        step?.kind = .expect(expectation)
                    default:
                        let platform = engine.flatMap(scenario.engine(named:))?.platformSSO ?? scenario.platformSSO
                        step?.kind = .act(try action(&cursor, platform: platform))
                    }
                    try cursor.end()
                    switch step?.kind {
                    case .expectInAnyOrder?, .expectOneOf?: break
                    default: step?.engine = engine
                    }
                    if let step { try blocks.add(step, to: &scenario.steps, column: indent + 1) }
                } else {
                    var cursor = TokenCursor(
                        try ScenarioLexer.tokens(trimmed, startColumn: indent + 1), endColumn: content.count + 1)
                    if try blocks.repeatLine(&cursor, line: line, steps: &scenario.steps) { continue }
                    guard scenario.steps.isEmpty, blocks.isEmpty else {
                        throw cursor.fail("declarations and settings must come before the first step")
                    }
                    try header(&cursor, &scenario, first: !sawHeader)
                    sawHeader = true
                    try cursor.end()
                }
            } catch {
                // The line is skipped and parsing goes on, so the script is reported whole.
                switch error {
                case .at(let column, let message): report(line, column, message)
                }
            }
        }
        for (line, column, message) in blocks.unclosed { report(line, column, message) }
        let ordered = problems.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        if var first = ordered.first {
            first.following = Array(ordered.dropFirst())
            first.omitted = omitted
            throw first
        }
        return scenario
    }

    /// A `> signIn` line as reports show it: the provider and the names of the fields, each value `…`.
    static func concealedSignIn(_ provider: ValueExpression, credentials: [String: ValueExpression], engine: String?) -> String {
        let shownProvider = switch provider {
        case .text(let id): id
        case .reference(let name): "$" + name
        case .none, .list: "…"
        }
        let fields = credentials.keys.sorted().map { "\($0)=…" }
        return ([">" + (engine.map { " @" + $0 } ?? ""), "signIn", shownProvider] + fields).joined(separator: " ")
    }

    /// `@NAME` right after the sigil: the engine a step addresses (nil: none named, which is `main`).
    static func addressedEngine(_ cursor: inout TokenCursor, _ scenario: Scenario) throws(ScenarioParseError.Reason)
        -> String?
    {
        guard case .word(let word)? = cursor.peek, word.hasPrefix("@") else { return nil }
        let column = cursor.column
        _ = cursor.next()
        let name = String(word.dropFirst())
        guard scenario.engineNames.contains(name) else {
            throw .at(column, "unknown engine '\(name)' (declare it with `engine \(name)`; known: \(scenario.engineNames.joined(separator: ", ")))")
        }
        return name  // `@main` stays explicit, so a block can tell it from the engine its first line named
    }

    /// A `<` line: an expectation, `nothing`, or the start or end of an any-order block (whose step
    /// is the whole block, at the line that opened it).
    static func expectationLine(
        _ cursor: inout TokenCursor, line: Int, text: String, engine: String?, _ blocks: inout Blocks
    ) throws(ScenarioParseError.Reason) -> Step? {
        let column = cursor.column
        if cursor.accept("any") {
            try cursor.expect("order {")
            try blocks.openGroup(line: line, column: column, engine: engine)
            return nil
        }
        if cursor.accept("one") {
            try cursor.expect("of {")
            try blocks.openGroup(line: line, column: column, engine: engine, oneOf: true)
            return nil
        }
        if cursor.accept("}") {
            guard let group = try blocks.closeGroup(column: column) else { return nil }
            let text = "< " + (group.engine.map { "@\($0) " } ?? "") + (group.oneOf ? "one of { … }" : "any order { … }")
            let kind: Step.Kind = group.oneOf ? .expectOneOf(group.expectations) : .expectInAnyOrder(group.expectations)
            return Step(line: group.line, engine: group.engine, text: text, kind: kind)
        }
        return Step(line: line, text: text, kind: try expectation(&cursor))
    }

    /// A `⇢` line: the next backend request, by operation and arguments — or, after `provider`, the next
    /// request to a provider of the chain (`⇢ provider ID REQUEST`, `credentials` with its resource).
    static func request(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> (Expectation, toProvider: Bool) {
        let column = cursor.column
        let name = try cursor.word("a backend operation, or provider")
        if name == "provider" {
            let provider = try cursor.pattern()
            let requestColumn = cursor.column
            let request = try cursor.word("a provider request")
            guard ScenarioText.providerRequests.contains(request) else {
                throw .at(requestColumn, "unknown provider request '\(request)' (\(ScenarioText.providerRequests.joined(separator: ", ")))")
            }
            var patterns: [Pattern] = [provider, .equals(.text(request))]
            if request == "credentials" { patterns.append(try cursor.pattern()) }
            return (Expectation(callback: ScenarioText.providerRequestName, arguments: patterns, acceptsMore: false), true)
        }
        guard let operation = BackendOperation(rawValue: name) else {
            let known = BackendOperation.allCases.map(\.rawValue).joined(separator: ", ")
            throw .at(column, "unknown backend operation '\(name)' (\(known))")
        }
        let arguments = ScenarioText.requestArguments(operation)
        var patterns: [Pattern] = []
        while !cursor.atEnd { patterns.append(try cursor.pattern()) }
        guard patterns.count == arguments.count else {
            let signature = arguments.isEmpty ? "no arguments" : arguments.joined(separator: " ")
            throw .at(column, "⇢ \(name) takes \(arguments.count) argument\(arguments.count == 1 ? "" : "s") (\(signature)), got \(patterns.count)")
        }
        return (Expectation(callback: ScenarioText.requestName(operation), arguments: patterns, acceptsMore: false), false)
    }
}
