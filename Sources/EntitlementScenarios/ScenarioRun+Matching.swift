import EntitlementEngine
import EntitlementSimulator

extension ScenarioRun {
    // MARK: - Values and matching

    /// The value `expression` stands for now (a `$name` must have been captured).
    func resolve(_ expression: ValueExpression) throws(Stop) -> ScenarioValue {
        switch expression {
        case .text(let text): return .text(text)
        case .none: return .none
        case .list(let items): return .list(try items.map { item throws(Stop) in try resolve(item) })
        case .reference(let name):
            guard let value = captures[name] else { throw Stop(expected: "$\(name) to be captured earlier", actual: "nothing captured as $\(name)") }
            return value
        }
    }

    /// The value as text.
    func text(_ expression: ValueExpression) throws(Stop) -> String {
        guard case .text(let text) = try resolve(expression) else {
            throw Stop(expected: "text", actual: try resolve(expression).redactedDescription)
        }
        return text
    }

    /// The value as text, or nil for `nil`.
    func optionalText(_ expression: ValueExpression) throws(Stop) -> String? {
        if case .none = try resolve(expression) { return nil }
        return try text(expression)
    }

    /// Every value of `pairs` as text.
    func texts(_ pairs: [String: ValueExpression]) throws(Stop) -> [String: String] {
        var out: [String: String] = [:]
        for (key, value) in pairs { out[key] = try text(value) }
        return out
    }

    /// Whether `observed` fits `expectation`; its captures are kept only when it does.
    mutating func match(_ expectation: Expectation, _ observed: ObservedCallback) -> Bool {
        guard expectation.callback == observed.name,
            expectation.acceptsMore ? expectation.arguments.count <= observed.arguments.count
                : expectation.arguments.count == observed.arguments.count
        else { return false }
        var captured = captures
        for (pattern, value) in zip(expectation.arguments, observed.arguments) {
            guard match(pattern, value, &captured) else { return false }
        }
        captures = captured
        return true
    }

    /// Whether `value` fits `pattern`, capturing into `captured`.
    func match(_ pattern: Pattern, _ value: ScenarioValue, _ captured: inout [String: ScenarioValue]) -> Bool {
        switch pattern {
        case .any: return true
        case .equals(let expression):
            guard let expected = try? resolve(expression) else { return false }
            return expected == value
        case .list(let patterns):
            guard case .list(let items) = value, items.count == patterns.count else { return false }
            return zip(patterns, items).allSatisfy { match($0, $1, &captured) }
        case .matches(let regex):
            guard case .text(let text) = value, let compiled = try? Regex(regex) else { return false }
            return text.contains(compiled)
        case .capture(let name, .matches(let regex)):
            // A regular expression with a group binds what the first group matched (the `state`
            // inside a URL); without one, the whole value.
            guard case .text(let text) = value, let compiled = try? Regex(regex), let found = text.firstMatch(of: compiled)
            else { return false }
            if found.output.count > 1, let group = found.output[1].substring {
                captured[name] = .text(String(group))
            } else {
                captured[name] = value
            }
            return true
        case .capture(let name, let inner):
            guard match(inner, value, &captured) else { return false }
            captured[name] = value
            return true
        case .not(let inner):
            var scratch = captured
            return !match(inner, value, &scratch)
        }
    }

    /// An expectation as a report shows it (captured values shown, secrets shortened).
    func describe(_ expectation: Expectation) -> String {
        let arguments = expectation.arguments.map(describe) + (expectation.acceptsMore ? ["..."] : [])
        return ([expectation.callback] + arguments).joined(separator: " ")
    }

    /// A pattern as a report shows it.
    func describe(_ pattern: Pattern) -> String {
        switch pattern {
        case .any: "*"
        case .equals(.reference(let name)): "$\(name)" + (captures[name].map { " (= \($0.redactedDescription))" } ?? "")
        case .equals(let expression): (try? resolve(expression).redactedDescription) ?? "?"
        case .list(let items): "[" + items.map(describe).joined(separator: ", ") + "]"
        case .matches(let regex): "~\(ScenarioValue.quote(regex))"
        case .capture(let name, let inner): "$\(name)=\(describe(inner))"
        case .not(let inner): "!\(describe(inner))"
        }
    }
}
