import EntitlementEngine

/// Reads the tokens of one line left to right; every error names the column it is at.
struct TokenCursor {
    private let tokens: [Token]
    private var index = 0
    /// The column just past the end of the line, for "expected more" errors.
    private let endColumn: Int

    init(_ tokens: [Token], endColumn: Int) {
        self.tokens = tokens
        self.endColumn = endColumn
    }

    var atEnd: Bool { index >= tokens.count }
    var column: Int { atEnd ? endColumn : tokens[index].column }
    var peek: Token.Kind? { atEnd ? nil : tokens[index].kind }

    func fail(_ message: String) -> ScenarioParseError.Reason { .at(column, message) }

    mutating func next() -> Token.Kind? {
        defer { index += 1 }
        return peek
    }

    /// The next token must be a bare word; returns it.
    mutating func word(_ what: String) throws(ScenarioParseError.Reason) -> String {
        guard case .word(let word) = peek else { throw fail("expected \(what)") }
        index += 1
        return word
    }

    /// True (and consumed) when the next token is the bare word `word`.
    mutating func accept(_ word: String) -> Bool {
        guard case .word(word) = peek else { return false }
        index += 1
        return true
    }

    /// The next tokens must be exactly these words (a fixed phrase such as `logs in as`).
    mutating func expect(_ phrase: String) throws(ScenarioParseError.Reason) {
        for word in phrase.split(separator: " ") {
            guard accept(String(word)) else { throw fail("expected '\(phrase)'") }
        }
    }

    /// The line must end here.
    func end() throws(ScenarioParseError.Reason) {
        guard atEnd else { throw fail("unexpected text at the end of the line") }
    }

    /// A value: a word, a string, `nil`, `$name` or a `[list]`.
    mutating func value(_ what: String) throws(ScenarioParseError.Reason) -> ValueExpression {
        switch next() {
        case .word("nil"): return .none
        case .word(let word), .string(let word): return .text(word)
        case .reference(let name): return .reference(name)
        case .open:
            return .list(try listRest { cursor throws(ScenarioParseError.Reason) in try cursor.value("a list element") })
        default:
            index -= 1
            throw fail("expected \(what)")
        }
    }

    /// The elements of a `[list]` whose `[` was just read, up to and including its `]`.
    private mutating func listRest<Element>(
        _ element: (inout TokenCursor) throws(ScenarioParseError.Reason) -> Element
    ) throws(ScenarioParseError.Reason) -> [Element] {
        var elements: [Element] = []
        if case .close = peek {
            index += 1
            return elements
        }
        while true {
            elements.append(try element(&self))
            switch next() {
            case .comma: continue
            case .close: return elements
            default:
                index -= 1
                throw fail("expected ',' or ']' in the list")
            }
        }
    }

    /// A `$name` (the name of a value to hold).
    mutating func captureName() throws(ScenarioParseError.Reason) -> String {
        guard case .reference(let name) = peek else { throw fail("expected a $name") }
        index += 1
        return name
    }

    /// An expectation argument: `*`, `~"re"`, `$x`, `$x=PATTERN`, `!PATTERN`, a literal or a `[list]` of patterns.
    mutating func pattern() throws(ScenarioParseError.Reason) -> Pattern {
        switch next() {
        case .star: return .any
        case .bang:
            guard !atEnd else { throw fail("'!' needs a pattern after it, for example '!$token'") }
            return .not(try pattern())
        case .regex(let pattern): return .matches(pattern)
        case .reference(let name): return .equals(.reference(name))
        case .capture(let name):
            guard !atEnd, peek != .ellipsis else { throw fail("'$\(name)=' needs a pattern after it, for example '*'") }
            return .capture(name, try pattern())
        case .word("nil"): return .equals(.none)
        case .word(let word), .string(let word): return .equals(.text(word))
        case .open:
            return .list(try listRest { cursor throws(ScenarioParseError.Reason) in try cursor.pattern() })
        default:
            index -= 1
            throw fail("expected an argument: a value, '*', '~\"regex\"', '$name' or '$name=pattern'")
        }
    }

    /// A comma-separated list of bare words (`a, b, c`).
    mutating func wordList(_ what: String) throws(ScenarioParseError.Reason) -> [String] {
        var words = [try word(what)]
        while case .comma = peek {
            index += 1
            words.append(try word(what))
        }
        return words
    }

    /// A duration such as `500ms`, `90s`, `10m`, `24h`, `2d`, or a compound one from the largest
    /// unit down, each unit at most once: `59m30s`, `1h30m`, `2d12h`, `1s500ms`.
    mutating func duration() throws(ScenarioParseError.Reason) -> Duration {
        let start = column
        let text = try word("a duration such as 90s, 10m or 59m30s")
        let problem = ScenarioParseError.Reason.at(
            start, "'\(text)' is not a duration (numbers with d, h, m, s or ms, largest first: 90s, 10m, 59m30s)")
        // Longest unit names first, so "ms" is not read as "m" followed by "s".
        let units: [(name: String, milliseconds: Int64, rank: Int)] = [
            ("ms", 1, 0), ("d", 86_400_000, 4), ("h", 3_600_000, 3), ("m", 60_000, 2), ("s", 1000, 1),
        ]
        var rest = Substring(text)
        var total: Int64 = 0
        var lastRank = Int.max
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty else { throw problem }
            guard let amount = Int64(digits) else { throw .at(start, "'\(text)' is longer than the engine's clock can count") }
            rest = rest.dropFirst(digits.count)
            guard let unit = units.first(where: { rest.hasPrefix($0.name) }), unit.rank < lastRank else { throw problem }
            rest = rest.dropFirst(unit.name.count)
            lastRank = unit.rank
            let (part, overflow) = amount.multipliedReportingOverflow(by: unit.milliseconds)
            let (sum, sumOverflow) = total.addingReportingOverflow(part)
            guard !overflow, !sumOverflow else { throw .at(start, "'\(text)' is longer than the engine's clock can count") }
            total = sum
        }
        return .milliseconds(total)
    }

    /// A non-negative whole number.
    mutating func number(_ what: String) throws(ScenarioParseError.Reason) -> Int {
        let start = column
        let text = try word(what)
        guard let number = Int(text), number >= 0 else { throw .at(start, "'\(text)' is not \(what)") }
        return number
    }

    /// `k=v` pairs until the end of the line or a word in `stop`.
    mutating func pairs(stop: Set<String> = []) throws(ScenarioParseError.Reason) -> [String: ValueExpression] {
        var pairs: [String: ValueExpression] = [:]
        while case .word(let word) = peek, !stop.contains(word) {
            let start = column
            index += 1
            guard let equals = word.firstIndex(of: "="), equals != word.startIndex else {
                throw .at(start, "expected key=value, got '\(word)'")
            }
            let key = String(word[..<equals])
            let rest = String(word[word.index(after: equals)...])
            pairs[key] = rest.isEmpty ? try value("a value after '\(key)='") : .text(rest)
        }
        return pairs
    }
}
