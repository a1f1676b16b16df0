import EntitlementEngine
/// Draws the transition table: Mermaid `stateDiagram-v2` (the checked-in `StateCharts/*.md`),
/// Graphviz DOT and W3C SCXML 1.0.
package enum StateChart {
    /// The chart formats.
    package enum Format: String, Sendable, CaseIterable {
        /// Mermaid `stateDiagram-v2`, as GitHub renders it.
        case mermaid
        /// Graphviz DOT.
        case dot
        /// W3C SCXML 1.0, for statechart tools.
        case scxml
    }

    // MARK: - Mermaid

    /// The chart of `part`: the body of the one `mermaid` block in `StateCharts/<name>.md`.
    ///
    /// Grammar (a strict subset the tests parse): `stateDiagram-v2`, then `[*] --> S` for the
    /// part's entry states, then one `A --> B : input [condition] / action, action` line per row
    /// leaving one of the part's states, in table order.
    package static func mermaid(_ part: Part) -> String {
        var lines = ["stateDiagram-v2"]
        lines += part.entries.map { "    [*] --> \($0)" }
        lines += part.rows.map { "    " + $0.chartLine }
        return lines.joined(separator: "\n")
    }

    /// The fenced block as it appears in the chart file.
    package static func mermaidBlock(_ part: Part) -> String {
        "```mermaid\n" + mermaid(part) + "\n```"
    }

    /// The overview: the configuration, authentication and authorization regions with the login
    /// flow, platform picker, second screen and logout each drawn as one state, and one arrow per
    /// pair of states with the inputs that take it (conditions, actions and steps that stay inside
    /// one state are in the detailed charts).
    package static func overview() -> String {
        var lines = ["stateDiagram-v2"]
        for region in Part.overviewRegions {
            let parts = Part.all.filter { $0.region == region }
            func node(_ state: String) -> String {
                guard let part = parts.first(where: { $0.states.contains(state) }), part.isComposite else { return state }
                return part.node
            }
            lines.append("    state \(region.rawValue) {")
            lines.append("        [*] --> \(region.initialState)")
            for part in parts where part.isComposite { lines.append("        \(part.node) : \(part.title)") }
            var edges: [(from: String, to: String, inputs: [String])] = []
            for row in TransitionTable.rows(of: region) {
                let (from, to) = (node(row.from), node(row.to))
                guard from != to else { continue }
                if let index = edges.firstIndex(where: { $0.from == from && $0.to == to }) {
                    if !edges[index].inputs.contains(row.input) { edges[index].inputs.append(row.input) }
                } else {
                    edges.append((from, to, [row.input]))
                }
            }
            lines += edges.map { "        \($0.from) --> \($0.to) : \($0.inputs.sorted().joined(separator: ", "))" }
            lines.append("    }")
        }
        return lines.joined(separator: "\n")
    }

    /// The overview's fenced block.
    package static func overviewBlock() -> String { "```mermaid\n" + overview() + "\n```" }

    // MARK: - Graphviz DOT

    /// All regions as one DOT graph, a cluster per region.
    package static func dot() -> String {
        var lines = [
            "digraph EntitlementMachine {", "    rankdir=LR;", "    node [shape=box, style=rounded, fontname=\"Helvetica\"];",
            "    edge [fontname=\"Helvetica\", fontsize=10];",
        ]
        for region in TransitionRow.Region.allCases {
            let name = region.rawValue
            lines.append("    subgraph cluster_\(name) {")
            lines.append("        label=\"\(name)\";")
            lines.append("        \"\(name).start\" [shape=point, label=\"\"];")
            for state in region.states { lines.append("        \"\(name).\(state)\" [label=\"\(state)\"];") }
            lines.append("        \"\(name).start\" -> \"\(name).\(region.initialState)\";")
            for row in TransitionTable.rows(of: region) {
                lines.append(
                    "        \"\(name).\(row.from)\" -> \"\(name).\(row.to)\" [label=\"\(label(row).dotEscaped)\"];")
            }
            lines.append("    }")
        }
        lines.append("}")
        return lines.joined(separator: "\n") + "\n"
    }

    // MARK: - SCXML

    /// All regions as one SCXML document: a `<parallel>` of the regions, each state's rows as
    /// `<transition event cond target>` with one `<log label="action">` per action. Conditions are
    /// declared as data of an ECMAScript data model so the document is self-contained.
    package static func scxml() -> String {
        var lines = [
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<scxml xmlns=\"http://www.w3.org/2005/07/scxml\" version=\"1.0\" datamodel=\"ecmascript\" name=\"EntitlementMachine\" initial=\"EntitlementMachine\">",
            "  <datamodel>",
        ]
        let conditions = Set(TransitionTable.rows.compactMap(\.condition)).sorted()
        lines += conditions.map { "    <data id=\"\($0)\" expr=\"false\"/>" }
        lines.append("  </datamodel>")
        lines.append("  <parallel id=\"EntitlementMachine\">")
        for region in TransitionRow.Region.allCases {
            let name = region.rawValue
            lines.append("    <state id=\"\(name)\" initial=\"\(name).\(region.initialState)\">")
            for state in region.states {
                let rows = TransitionTable.rows(of: region).filter { $0.from == state }
                guard !rows.isEmpty else {
                    lines.append("      <state id=\"\(name).\(state)\"/>")
                    continue
                }
                lines.append("      <state id=\"\(name).\(state)\">")
                for row in rows {
                    var attributes = "event=\"\(row.input)\""
                    if let condition = row.condition { attributes += " cond=\"\(condition)\"" }
                    attributes += " target=\"\(name).\(row.to)\""
                    if row.actions.isEmpty {
                        lines.append("        <transition \(attributes)/>")
                    } else {
                        lines.append("        <transition \(attributes)>")
                        lines += row.actions.map { "          <log label=\"action\" expr=\"'\($0)'\"/>" }
                        lines.append("        </transition>")
                    }
                }
                lines.append("      </state>")
            }
            lines.append("    </state>")
        }
        lines += ["  </parallel>", "</scxml>"]
        return lines.joined(separator: "\n") + "\n"
    }

    private static func label(_ row: TransitionRow) -> String {
        var label = row.input
        if let condition = row.condition { label += " [\(condition)]" }
        if !row.actions.isEmpty { label += " / " + row.actions.joined(separator: ", ") }
        return label
    }
}

extension String {
    fileprivate var dotEscaped: String {
        var out = ""
        for character in self {
            if character == "\"" || character == "\\" { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
