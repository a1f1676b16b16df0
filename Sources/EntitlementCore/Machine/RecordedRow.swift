/// A row as the machine records it while it steps: its parts as the machine's own values, which
/// ``TransitionRow`` spells out as text only when someone reads it (`EntitlementMachine.lastTransitions`).
/// A model checker that checks every step against the table compares these (`TransitionTable/lists(_:)`).
package struct RecordedRow: Sendable, Hashable {
    package var region: TransitionRow.Region
    package var from: String
    package var input: TransitionInput
    package var condition: TransitionGuard?
    package var to: String
    package var actions: [TransitionAction]

    /// Hashes the enumerations by their case, not their names, and the state names by their length (a
    /// step's rows are looked up in the table on every step a model checker takes); equal rows hash alike,
    /// as they must, and the few rows alike in all but their states' names are told apart by `==`.
    package func hash(into hasher: inout Hasher) {
        hasher.combine(Self.caseTag(region))
        hasher.combine(from.utf8.count)
        hasher.combine(Self.caseTag(input))
        hasher.combine(condition.map(Self.caseTag) ?? .max)
        hasher.combine(to.utf8.count)
        hasher.combine(actions.count)
        for action in actions { hasher.combine(Self.caseTag(action)) }
    }

    /// A payload-free enumeration's case as the byte that stores it: equal cases, equal bytes.
    private static func caseTag<Value: RawRepresentable>(_ value: Value) -> UInt8 {
        precondition(MemoryLayout<Value>.size == 1, "a row's part is an enumeration of fewer than 256 cases")
        return withUnsafeBytes(of: value) { $0[0] }
    }

    /// The row spelled out.
    package var row: TransitionRow {
        TransitionRow(
            region: region, from: from, input: input.rawValue, condition: condition?.rawValue, to: to, actions: actions.map(\.rawValue))
    }
}

extension RecordedRow {
    /// `row` in the machine's own values; nil when a part names no value (no step can record it).
    init?(_ row: TransitionRow) {
        guard let input = TransitionInput(rawValue: row.input) else { return nil }
        var condition: TransitionGuard?
        if let name = row.condition {
            guard let value = TransitionGuard(rawValue: name) else { return nil }
            condition = value
        }
        var actions: [TransitionAction] = []
        for name in row.actions {
            guard let action = TransitionAction(rawValue: name) else { return nil }
            actions.append(action)
        }
        self.init(region: row.region, from: row.from, input: input, condition: condition, to: row.to, actions: actions)
    }
}

extension TransitionTable {
    /// The rows in the machine's own values, for membership checks of every step.
    private static let recordedSet = Set(rows.compactMap(RecordedRow.init))

    /// Whether the table lists the row the machine recorded.
    package static func lists(_ recorded: RecordedRow) -> Bool { recordedSet.contains(recorded) }
}
