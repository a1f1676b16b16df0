import EntitlementEngine
import EntitlementTracing
import Foundation
import EntitlementTestSupport
import Testing

/// The charts in `StateCharts/` against the machine's transition table, both ways.
@Suite("StateCharts conform to the transition table")
struct ChartConformanceTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func chart(_ part: StateChart.Part) throws -> ParsedChart {
        let path = "StateCharts/\(part.name).md"
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        return try ChartParser.parse(markdown: text, file: path, region: part.region)
    }

    /// Every row the charts of `region` draw.
    static func rows(of region: TransitionRow.Region) throws -> [TransitionRow] {
        try StateChart.Part.all.filter { $0.region == region }.flatMap { try chart($0).rows }
    }

    /// The rows of `chart` the table lacks and the table's rows the chart lacks, sorted and printable.
    static func differences(_ chart: [TransitionRow], _ table: [TransitionRow]) -> (missing: [String], extra: [String]) {
        let chartSet = Set(chart), tableSet = Set(table)
        return (
            tableSet.subtracting(chartSet).sorted().map(\.chartLine),
            chartSet.subtracting(tableSet).sorted().map(\.chartLine)
        )
    }

    @Test(arguments: StateChart.Part.all)
    func theChartsRowsAreTheTablesRows(part: StateChart.Part) throws {
        let chart = try Self.chart(part)
        let (missing, extra) = Self.differences(chart.rows, part.rows)
        #expect(missing.isEmpty, "rows of the table missing from StateCharts/\(part.name).md:\n\(missing.joined(separator: "\n"))")
        #expect(extra.isEmpty, "rows in StateCharts/\(part.name).md that the table does not have there:\n\(extra.joined(separator: "\n"))")
        expectEqual(chart.rows.count, Set(chart.rows).count, "a row is drawn twice")
        expectEqual(chart.entries, part.entries)
        expectEqual(chart.blockText, StateChart.mermaid(part), "the block differs from `entitle chart --chart \(part.name)`")
    }

    @Test(arguments: TransitionRow.Region.allCases)
    func aRegionsChartsDrawEachRowOnceAndEveryStateIsReachable(region: TransitionRow.Region) throws {
        let parts = StateChart.Part.all.filter { $0.region == region }
        let owned = parts.flatMap(\.states)
        expectEqual(owned.sorted(), region.states.sorted(), "each state of \(region.rawValue) belongs to exactly one chart: \(owned)")
        let rows = try Self.rows(of: region)
        #expect(rows.count == TransitionTable.rows(of: region).count && Set(rows) == Set(TransitionTable.rows(of: region)))
        let drawn = Set(rows.flatMap { [$0.from, $0.to] } + [region.initialState])
        expectEqual(drawn, Set(region.states), "states drawn \(drawn.sorted()), states in the code \(region.states)")
        var reached: Set<String> = [region.initialState]
        var frontier = [region.initialState]
        while let state = frontier.popLast() {
            for row in rows where row.from == state && !reached.contains(row.to) {
                reached.insert(row.to)
                frontier.append(row.to)
            }
        }
        let unreachable = Set(region.states).subtracting(reached).sorted()
        #expect(unreachable.isEmpty, "unreachable from [*] in \(region.rawValue): \(unreachable)")
    }

    @Test func theOverviewHasAtMost16StatesAndStandsForTheTable() throws {
        let text = try String(contentsOf: Self.root.appendingPathComponent("StateCharts/overview.md"), encoding: .utf8)
        #expect(text.contains(StateChart.overviewBlock()), "StateCharts/overview.md is not `entitle chart --chart overview`")
        var states: Set<String> = []
        var arrows: [(from: String, to: String, inputs: Set<String>)] = []
        for line in StateChart.overview().split(separator: "\n").map({ $0.trimmingCharacters(in: .whitespaces) }) {
            let arrow = line.components(separatedBy: " --> ")
            if arrow.count == 2 {
                let target = arrow[1].components(separatedBy: " : ")
                if arrow[0] != "[*]" { states.insert(arrow[0]) }
                states.insert(target[0])
                if target.count == 2 {
                    arrows.append((arrow[0], target[0], Set(target[1].components(separatedBy: ", "))))
                }
            } else if line.contains(" : ") {
                states.insert(line.components(separatedBy: " : ")[0])
            }
        }
        #expect(states.count <= 16, "\(states.count) states: \(states.sorted())")
        func node(_ row: TransitionRow) -> (String, String) {
            func name(_ state: String) -> String {
                let part = StateChart.Part.all.first { $0.region == row.region && $0.states.contains(state) }!
                return part.isComposite ? part.node : state
            }
            return (name(row.from), name(row.to))
        }
        let crossing = StateChart.Part.overviewRegions.flatMap { TransitionTable.rows(of: $0) }.filter { node($0).0 != node($0).1 }
        for row in crossing {
            let (from, to) = node(row)
            #expect(arrows.contains { $0.from == from && $0.to == to && $0.inputs.contains(row.input) }, "no arrow for \(row.chartLine)")
        }
        for arrow in arrows {
            #expect(crossing.contains { node($0) == (arrow.from, arrow.to) && arrow.inputs.contains($0.input) }, "an arrow without a row")
        }
    }

    @Test func theChartsUseEveryInputAndOnlyTheCodesNames() throws {
        let rows = try StateChart.Part.all.flatMap { try Self.chart($0).rows }
        expectEqual(Set(rows.map(\.input)), Set(TransitionInput.allCases.map(\.rawValue)))
        let conditions = Set(TransitionGuard.allCases.map(\.rawValue))
        let actions = Set(TransitionAction.allCases.map(\.rawValue))
        #expect(rows.compactMap(\.condition).allSatisfy(conditions.contains))
        #expect(rows.flatMap(\.actions).allSatisfy(actions.contains))
        // Every call and every input case of the machine has a name the charts can use.
        let inputs = Set(TransitionInput.allCases.map(\.rawValue))
        #expect(EntitlementCall.names.isSubset(of: inputs))
        let sample: [Input] = [
            .optionsChanged([:]), .configurationFailed(OperationID(1, owner: .configuration), .timeout),
            .flowSecretsDrawn(FlowID(1), FlowSecrets(state: "")),
            .backendAnswered(OperationID(1, owner: .authorization), .decisions([])), .backendFailed(OperationID(1, owner: .authorization), .timeout),
            .timerFired(.redirectDeadline(FlowID(1))),
        ]
        #expect(sample.allSatisfy { inputs.contains($0.name) })
        expectEqual(Set(TransitionTable.rows.compactMap(\.condition)), conditions, "a condition no row uses")
        expectEqual(Set(TransitionTable.rows.flatMap(\.actions)), actions, "an action no row uses")
    }

    @Test func theTableHasNoDuplicateRows() {
        expectEqual(TransitionTable.rows.count, TransitionTable.rowSet.count)
    }

    @Test func removingAddingOrChangingAChartLineIsReportedByName() throws {
        let part = try #require(StateChart.Part.named("login"))
        let table = part.rows
        let chart = try Self.chart(part)
        var removed = chart.rows
        let gone = removed.remove(at: 3)
        expectEqual(Self.differences(removed, table).missing, [gone.chartLine])
        let invented = TransitionRow(region: part.region, from: "awaitingRedirect", input: "logout", to: "awaitingRedirect")
        expectEqual(Self.differences(chart.rows + [invented], table).extra, [invented.chartLine])
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
        ("stateDiagram-v2\n    [*] --> a\n    [*] --> a", 5, "the entry 'a' is drawn twice"),
        ("stateDiagram-v2\n    [*] --> a\n    a --> b : x\n    [*] --> b", 6, "the entry states must come before the transitions"),
        ("stateDiagram-v2\n    [*] --> a\n    state a {", 5, "not a line of the subset"),
        ("stateDiagram-v2\n    [*] --> a\n    a --> 2b : x", 5, "expected 'A --> B"),
    ])
    func theParserRefusesLinesOutsideTheSubsetWithFileAndLine(block: String, line: Int, message: String) {
        do {
            _ = try ChartParser.parse(markdown: "# Title\n```mermaid\n\(block)\n```\n", file: "t.md", region: .calls)
            Issue.record("accepted \(block)")
        } catch {
            expectEqual(error.line, line, "\(error)")
            #expect(error.message.hasPrefix(message), "\(error)")
            #expect(error.description.hasPrefix("t.md:\(line): "))
        }
    }

    @Test func theParserAcceptsTheWholeSubset() throws {
        let chart = try ChartParser.parse(
            markdown: "```mermaid\nstateDiagram-v2\n%% a comment\n\n[*] --> a\na --> b : x\na --> b : x [c]\na --> b : x [c] / d, e\nb --> a : y / f\nb --> [*]\n```\n",
            file: "t.md", region: .calls)
        #expect(chart.entries == ["a"] && chart.finals == ["b"] && chart.rows.count == 4)
        expectEqual(chart.rows[2], TransitionRow(region: .calls, from: "a", input: "x", condition: "c", to: "b", actions: ["d", "e"]))
    }

    @Test func aSecondBlockIsRefused() {
        #expect(throws: ChartParseError.self) {
            try ChartParser.parse(markdown: "```mermaid\nstateDiagram-v2\n[*] --> a\n```\n```mermaid\n```\n", file: "t.md", region: .calls)
        }
    }

    @Test func theReadmeShowsTheOverviewAsGenerated() throws {
        let readme = try String(contentsOf: Self.root.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(
            readme.contains("<!-- chart: overview -->\n" + StateChart.overviewBlock()),
            "README's overview is not the generated one: run `swift run entitle chart --write StateCharts`")
        for part in StateChart.Part.all { #expect(readme.contains("(StateCharts/\(part.name).md)"), "README links \(part.name).md") }
    }
}
