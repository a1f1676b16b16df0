import EntitlementEngine
import Foundation
import Testing

/// The charts in `StateCharts/` against the machine's transition table, both ways.
@Suite("StateCharts conform to the transition table")
struct ChartConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func chart(_ region: TransitionRow.Region) throws -> ParsedChart {
        let path = "StateCharts/\(region.rawValue).md"
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        return try ChartParser.parse(markdown: text, file: path, region: region)
    }

    /// The rows of `chart` the table lacks and the table's rows the chart lacks, sorted and printable.
    static func differences(_ chart: [TransitionRow], _ table: [TransitionRow]) -> (missing: [String], extra: [String]) {
        let chartSet = Set(chart), tableSet = Set(table)
        return (
            tableSet.subtracting(chartSet).sorted().map(\.chartLine),
            chartSet.subtracting(tableSet).sorted().map(\.chartLine)
        )
    }

    @Test(arguments: TransitionRow.Region.allCases)
    func theChartsRowsAreTheTablesRows(region: TransitionRow.Region) throws {
        let chart = try Self.chart(region)
        let (missing, extra) = Self.differences(chart.rows, TransitionTable.rows(of: region))
        #expect(missing.isEmpty, "rows of the table missing from StateCharts/\(region.rawValue).md:\n\(missing.joined(separator: "\n"))")
        #expect(extra.isEmpty, "rows in StateCharts/\(region.rawValue).md that the table does not have:\n\(extra.joined(separator: "\n"))")
        #expect(chart.rows.count == Set(chart.rows).count, "a row is drawn twice")
        #expect(chart.initial == region.initialState)
        #expect(chart.blockText == StateChart.mermaid(region), "the block differs from `entitle chart --region \(region.rawValue)`")
    }

    @Test(arguments: TransitionRow.Region.allCases)
    func everyStateIsDrawnAndReachable(region: TransitionRow.Region) throws {
        let chart = try Self.chart(region)
        let drawn = Set(chart.rows.flatMap { [$0.from, $0.to] } + [chart.initial])
        #expect(drawn == Set(region.states), "states drawn \(drawn.sorted()), states in the code \(region.states)")
        var reached: Set<String> = [chart.initial]
        var frontier = [chart.initial]
        while let state = frontier.popLast() {
            for row in chart.rows where row.from == state && !reached.contains(row.to) {
                reached.insert(row.to)
                frontier.append(row.to)
            }
        }
        let unreachable = Set(region.states).subtracting(reached).sorted()
        #expect(unreachable.isEmpty, "unreachable from [*] in \(region.rawValue): \(unreachable)")
    }

    @Test func theChartsUseEveryInputAndOnlyTheCodesNames() throws {
        let rows = try TransitionRow.Region.allCases.flatMap { try Self.chart($0).rows }
        #expect(Set(rows.map(\.input)) == Set(TransitionInput.allCases.map(\.rawValue)))
        let conditions = Set(TransitionGuard.allCases.map(\.rawValue))
        let actions = Set(TransitionAction.allCases.map(\.rawValue))
        #expect(rows.compactMap(\.condition).allSatisfy(conditions.contains))
        #expect(rows.flatMap(\.actions).allSatisfy(actions.contains))
        // Every call and every input case of the machine has a name the charts can use.
        let inputs = Set(TransitionInput.allCases.map(\.rawValue))
        #expect(EntitlementCall.names.isSubset(of: inputs))
        let sample: [Input] = [
            .optionsChanged([:]), .configurationFailed(OperationID(1), .timeout),
            .flowSecretsDrawn(FlowID(1), FlowSecrets(state: "")),
            .backendAnswered(OperationID(1), .decisions([])), .backendFailed(OperationID(1), .timeout),
            .timerFired(.redirectDeadline(FlowID(1))),
        ]
        #expect(sample.allSatisfy { inputs.contains($0.name) })
        #expect(Set(TransitionTable.rows.compactMap(\.condition)) == conditions, "a condition no row uses")
        #expect(Set(TransitionTable.rows.flatMap(\.actions)) == actions, "an action no row uses")
    }

    @Test func theTableHasNoDuplicateRows() {
        #expect(TransitionTable.rows.count == TransitionTable.rowSet.count)
    }

    @Test func removingAddingOrChangingAChartLineIsReportedByName() throws {
        let region = TransitionRow.Region.authentication
        let table = TransitionTable.rows(of: region)
        let chart = try Self.chart(region)
        var removed = chart.rows
        let gone = removed.remove(at: 3)
        #expect(Self.differences(removed, table).missing == [gone.chartLine])
        let invented = TransitionRow(region: region, from: "authenticated", input: "logout", to: "authenticated")
        #expect(Self.differences(chart.rows + [invented], table).extra == [invented.chartLine])
        var changed = chart.rows
        changed[5].to = "loggingOut"
        let difference = Self.differences(changed, table)
        #expect(difference.missing == [chart.rows[5].chartLine] && difference.extra == [changed[5].chartLine])
    }

    @Test(arguments: [
        ("stateDiagram-v2\n    [*] --> a\n    a -> b : x", 5, "not a line of the subset"),
        ("flowchart LR\n    a --> b", 3, "the block must start with 'stateDiagram-v2'"),
        ("stateDiagram-v2\n    a --> b : x", 3, "no '[*] --> S' line"),
        ("stateDiagram-v2\n    [*] --> a\n    a --> b : x [y", 5, "the label 'x [y' is not"),
        ("stateDiagram-v2\n    [*] --> a\n    a --> b : x / do-it", 5, "the label 'x / do-it' is not"),
        ("stateDiagram-v2\n    [*] --> a\n    a --> b : x: y", 5, "the label 'x: y' is not"),
        ("stateDiagram-v2\n    [*] --> a\n    [*] --> b", 5, "a second initial state"),
        ("stateDiagram-v2\n    [*] --> a\n    state a {", 5, "not a line of the subset"),
        ("stateDiagram-v2\n    [*] --> a\n    a --> 2b : x", 5, "expected 'A --> B"),
    ])
    func theParserRefusesLinesOutsideTheSubsetWithFileAndLine(block: String, line: Int, message: String) {
        do {
            _ = try ChartParser.parse(markdown: "# Title\n```mermaid\n\(block)\n```\n", file: "t.md", region: .calls)
            Issue.record("accepted \(block)")
        } catch {
            #expect(error.line == line, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
            #expect(error.description.hasPrefix("t.md:\(line): "))
        }
    }

    @Test func theParserAcceptsTheWholeSubset() throws {
        let chart = try ChartParser.parse(
            markdown: "```mermaid\nstateDiagram-v2\n%% a comment\n\n[*] --> a\na --> b : x\na --> b : x [c]\na --> b : x [c] / d, e\nb --> a : y / f\nb --> [*]\n```\n",
            file: "t.md", region: .calls)
        #expect(chart.initial == "a" && chart.finals == ["b"] && chart.rows.count == 4)
        #expect(chart.rows[2] == TransitionRow(region: .calls, from: "a", input: "x", condition: "c", to: "b", actions: ["d", "e"]))
    }

    @Test func aSecondBlockIsRefused() {
        #expect(throws: ChartParseError.self) {
            try ChartParser.parse(markdown: "```mermaid\nstateDiagram-v2\n[*] --> a\n```\n```mermaid\n```\n", file: "t.md", region: .calls)
        }
    }

    @Test func theReadmeShowsTheMainChartsAsGenerated() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        for region in [TransitionRow.Region.configuration, .authentication] {
            #expect(
                readme.contains("<!-- chart: \(region.rawValue) -->\n" + StateChart.mermaidBlock(region)),
                "README's \(region.rawValue) chart is not the generated one: run `swift run entitle chart --write StateCharts`")
        }
    }
}
