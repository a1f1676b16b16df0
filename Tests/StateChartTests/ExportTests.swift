import EntitlementEngine
import Foundation
import EntitlementTestSupport
import Testing

#if canImport(FoundationXML)
import FoundationXML
import EntitlementTracing
#endif

/// Reads the transitions back out of an SCXML document.
private final class SCXMLReader: NSObject, XMLParserDelegate {
    var states: [String] = []
    var initials: [String: String] = [:]
    var rows: [TransitionRow] = []
    private var current: TransitionRow?
    var rootName: String?

    func parser(
        _ parser: XMLParser, didStartElement name: String, namespaceURI: String?, qualifiedName: String?,
        attributes: [String: String] = [:]
    ) {
        switch name {
        case "scxml": rootName = name
        case "state":
            if let id = attributes["id"] {
                states.append(id)
                if let initial = attributes["initial"] { initials[id] = initial }
            }
        case "transition":
            let source = states.last ?? ""
            let parts = source.split(separator: ".", maxSplits: 1).map(String.init)
            let target = (attributes["target"] ?? "").split(separator: ".", maxSplits: 1).map(String.init)
            guard parts.count == 2, target.count == 2, let region = TransitionRow.Region(rawValue: parts[0]) else { return }
            current = TransitionRow(
                region: region, from: parts[1], input: attributes["event"] ?? "", condition: attributes["cond"],
                to: target[1])
        case "log":
            if let expression = attributes["expr"] { current?.actions.append(String(expression.dropFirst().dropLast())) }
        default: break
        }
    }

    func parser(_ parser: XMLParser, didEndElement name: String, namespaceURI: String?, qualifiedName: String?) {
        if name == "transition", let row = current {
            rows.append(row)
            current = nil
        }
    }
}

@Suite("entitle chart exports: SCXML and DOT carry the same transitions")
struct ExportTests {
    @Test func scxmlIsWellFormedAndHasTheTablesTransitions() throws {
        let reader = SCXMLReader()
        let parser = XMLParser(data: Data(StateChart.scxml().utf8))
        parser.delegate = reader
        #expect(parser.parse(), "not well formed: \(parser.parserError.map { "\($0)" } ?? "")")
        expectEqual(reader.rootName, "scxml")
        expectEqual(Set(reader.rows), TransitionTable.rowSet)
        expectEqual(reader.rows.count, TransitionTable.rows.count)
        for region in TransitionRow.Region.allCases {
            expectEqual(reader.initials[region.rawValue], "\(region.rawValue).\(region.initialState)")
            for state in region.states { #expect(reader.states.contains("\(region.rawValue).\(state)")) }
        }
    }

    @Test func dotHasOneEdgePerRowAndEveryState() {
        let dot = StateChart.dot()
        #expect(dot.hasPrefix("digraph EntitlementMachine {") && dot.hasSuffix("}\n"))
        let edges = dot.components(separatedBy: "\n").filter { $0.contains(" -> ") && $0.contains("label=") }
        expectEqual(edges.count, TransitionTable.rows.count)
        for row in TransitionTable.rows {
            let edge = "\"\(row.region.rawValue).\(row.from)\" -> \"\(row.region.rawValue).\(row.to)\""
            #expect(edges.contains { $0.contains(edge) && $0.contains(row.input) }, "no edge for \(row)")
        }
    }
}
