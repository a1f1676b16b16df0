import EntitlementEngine

/// A chart parsed from one `StateCharts/*.md` file.
struct ParsedChart {
    /// The `[*] --> S` states: where the chart starts.
    var entries: [String]
    /// The transition rows, in file order, with the region filled in.
    var rows: [TransitionRow]
    /// States with `S --> [*]`.
    var finals: [String]
    /// The block's lines, exactly as written (without the fences).
    var blockText: String
}

/// Why a chart was refused: the file, the line and what is wrong.
struct ChartParseError: Error, CustomStringConvertible {
    var file: String
    var line: Int
    var message: String
    var description: String { "\(file):\(line): \(message)" }
}

/// Parses the strict Mermaid subset of `StateCharts/README.md`; anything else is refused with
/// file and line. Dependency-free: string splitting only.
enum ChartParser {
    static func parse(markdown: String, file: String, region: TransitionRow.Region) throws(ChartParseError) -> ParsedChart {
        let lines = markdown.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let opens = lines.indices.filter { lines[$0].trimmingSpaces == "```mermaid" }
        guard let open = opens.first else { throw ChartParseError(file: file, line: 1, message: "no ```mermaid block") }
        guard opens.count == 1 else {
            throw ChartParseError(file: file, line: opens[1] + 1, message: "a second ```mermaid block (one per chart)")
        }
        guard let close = lines[(open + 1)...].firstIndex(where: { $0.trimmingSpaces == "```" }) else {
            throw ChartParseError(file: file, line: open + 1, message: "the ```mermaid block is not closed")
        }
        var header = false
        var entries: [String] = []
        var rows: [TransitionRow] = []
        var finals: [String] = []
        for index in (open + 1)..<close {
            let number = index + 1
            let line = lines[index].trimmingSpaces
            func fail(_ message: String) -> ChartParseError { ChartParseError(file: file, line: number, message: message) }
            if line.isEmpty || line.hasPrefix("%%") { continue }
            guard header else {
                guard line == "stateDiagram-v2" else { throw fail("the block must start with 'stateDiagram-v2'") }
                header = true
                continue
            }
            let arrow = line.components(separatedBy: " --> ")
            guard arrow.count == 2 else { throw fail("not a line of the subset: '\(line)'") }
            let from = arrow[0]
            if from == "[*]" {
                guard rows.isEmpty else { throw fail("the entry states must come before the transitions") }
                guard isIdentifier(arrow[1]) else { throw fail("'\(arrow[1])' is not a state name") }
                guard !entries.contains(arrow[1]) else { throw fail("the entry '\(arrow[1])' is drawn twice") }
                entries.append(arrow[1])
                continue
            }
            guard isIdentifier(from) else { throw fail("'\(from)' is not a state name") }
            if arrow[1] == "[*]" {
                finals.append(from)
                continue
            }
            let target = arrow[1].components(separatedBy: " : ")
            guard target.count == 2, isIdentifier(target[0]) else {
                throw fail("expected 'A --> B : input [condition] / action, action', got '\(line)'")
            }
            guard let row = parseLabel(target[1], region: region, from: from, to: target[0]) else {
                throw fail("the label '\(target[1])' is not 'input', 'input [condition]' or either with '/ action, action'")
            }
            rows.append(row)
        }
        guard header else { throw ChartParseError(file: file, line: open + 1, message: "empty block") }
        guard !entries.isEmpty else { throw ChartParseError(file: file, line: open + 2, message: "no '[*] --> S' line") }
        return ParsedChart(
            entries: entries, rows: rows, finals: finals, blockText: lines[(open + 1)..<close].joined(separator: "\n"))
    }

    private static func parseLabel(_ label: String, region: TransitionRow.Region, from: String, to: String) -> TransitionRow? {
        let slash = label.components(separatedBy: " / ")
        guard slash.count <= 2 else { return nil }
        var actions: [String] = []
        if slash.count == 2 {
            actions = slash[1].components(separatedBy: ", ")
            guard actions.allSatisfy(isIdentifier) else { return nil }
        }
        let head = slash[0].components(separatedBy: " ")
        guard let input = head.first, isIdentifier(input), head.count <= 2 else { return nil }
        var condition: String?
        if head.count == 2 {
            let bracketed = head[1]
            guard bracketed.hasPrefix("["), bracketed.hasSuffix("]") else { return nil }
            let name = String(bracketed.dropFirst().dropLast())
            guard isIdentifier(name) else { return nil }
            condition = name
        }
        return TransitionRow(region: region, from: from, input: input, condition: condition, to: to, actions: actions)
    }

    /// `[A-Za-z][A-Za-z0-9]*`.
    static func isIdentifier(_ text: String) -> Bool {
        func letter(_ scalar: Unicode.Scalar) -> Bool { ("A"..."Z").contains(scalar) || ("a"..."z").contains(scalar) }
        guard let first = text.unicodeScalars.first, letter(first) else { return false }
        return text.unicodeScalars.allSatisfy { letter($0) || ("0"..."9").contains($0) }
    }
}

extension String {
    var trimmingSpaces: String {
        var text = Substring(self)
        while text.first == " " || text.first == "\t" { text.removeFirst() }
        while text.last == " " || text.last == "\t" || text.last == "\r" { text.removeLast() }
        return String(text)
    }
}
