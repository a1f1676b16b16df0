/// The blocks a script opens and closes while it is parsed: `< any order {` … `< }` (expectations
/// that may match in any order), `< one of {` … `< }` (the next callback matches one of them) and
/// `repeat N {` … `}` (steps unrolled N times).
struct Blocks {
    /// The open expectation block: where it started, whether it is `one of`, and what it holds so far.
    private var group: (line: Int, column: Int, engine: String?, oneOf: Bool, expectations: [Expectation])?
    /// The open repeat blocks, innermost last: where each started, its count and its first step.
    private var repeats: [(line: Int, column: Int, count: Int, firstStep: Int)] = []

    /// Whether no block is open.
    var isEmpty: Bool { group == nil && repeats.isEmpty }

    /// Blocks still open at the end of the script, as problems.
    var unclosed: [(Int, Int, String)] {
        (group.map { [($0.line, $0.column, "'< \($0.oneOf ? "one of" : "any order") {' is never closed with '< }'")] } ?? [])
            + repeats.map { ($0.line, $0.column, "'repeat \($0.count) {' is never closed with '}'") }
    }

    /// Adds a parsed step: into the open any-order block (which takes expectations only), else to `steps`.
    mutating func add(_ step: Step, to steps: inout [Step], column: Int) throws(ScenarioParseError.Reason) {
        guard var open = group else {
            guard steps.count < ScenarioParser.stepLimit else {
                throw .at(column, "the script has more than \(ScenarioParser.stepLimit) steps")
            }
            steps.append(step)
            return
        }
        guard case .expect(let expectation) = step.kind else {
            throw .at(column, "an '< any order {' block holds expectations only ('<' and '⇢' lines); close it with '< }' first")
        }
        guard step.engine == nil || step.engine == (open.engine ?? Scenario.mainEngine) else {
            throw .at(column, "an '< any order {' block expects one engine's callbacks: name it with '@NAME' on the block's first line")
        }
        open.expectations.append(expectation)
        group = open
    }

    /// `< [@ENGINE] any order {` or `< [@ENGINE] one of {`.
    mutating func openGroup(line: Int, column: Int, engine: String?, oneOf: Bool = false) throws(ScenarioParseError.Reason) {
        guard group == nil else { throw .at(column, "expectation blocks do not nest; close the open one with '< }' first") }
        group = (line, column, engine, oneOf, [])
    }

    /// `< }`: the block's expectations, the line that opened it and the engine it named, or nil
    /// when it was empty.
    mutating func closeGroup(column: Int) throws(ScenarioParseError.Reason)
        -> (line: Int, engine: String?, oneOf: Bool, expectations: [Expectation])?
    {
        guard let open = group else { throw .at(column, "'< }' closes nothing: no '< any order {' or '< one of {' is open") }
        group = nil
        return open.expectations.isEmpty ? nil : (open.line, open.engine, open.oneOf, open.expectations)
    }

    /// Handles `repeat N {` and `}` lines; false for any other line.
    mutating func repeatLine(_ cursor: inout TokenCursor, line: Int, steps: inout [Step]) throws(ScenarioParseError.Reason) -> Bool {
        let column = cursor.column
        if cursor.accept("repeat") {
            guard group == nil else { throw .at(column, "a repeat block cannot start inside an any-order block") }
            let count = try cursor.number("a number of times (1 to 10000)")
            guard (1...10_000).contains(count) else { throw .at(column + 7, "repeat takes 1 to 10000 times, not \(count)") }
            try cursor.expect("{")
            try cursor.end()
            repeats.append((line, column, count, steps.count))
            return true
        }
        guard cursor.accept("}") else { return false }
        try cursor.end()
        guard group == nil else { throw .at(column, "close the any-order block with '< }' before the repeat block") }
        guard let open = repeats.popLast() else { throw .at(column, "'}' closes nothing: no 'repeat N {' is open") }
        let body = steps[open.firstStep...]
        guard body.count * (open.count - 1) <= ScenarioParser.stepLimit - steps.count else {
            throw .at(column, "the repeat block makes more than \(ScenarioParser.stepLimit) steps")
        }
        for _ in 1..<open.count { steps += body }
        return true
    }
}
