/// A script the parser refuses: file, line and column, and why — the first problem, with every
/// later one in `following` (a script is reported whole, not one error per run).
public struct ScenarioParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A reason with the column it points at.
    enum Reason: Error, Sendable, Hashable {
        case at(Int, String)
    }

    /// The file.
    package var file: String
    /// 1-based line.
    package var line: Int
    /// 1-based column.
    package var column: Int
    /// What is wrong.
    package var message: String
    /// The problems on later lines, in order (at most ``ScenarioParseError/reportLimit`` in all).
    package var following: [ScenarioParseError] = []
    /// Problems beyond the report limit, counted but not kept.
    package var omitted = 0

    /// How many problems one error keeps (a binary file is not worth a million lines).
    package static let reportLimit = 50

    /// Creates a parse error.
    package init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// Every problem as `file:line:column: error: message`, the form editors and CI logs
    /// understand, one per line.
    public var description: String {
        ([self] + following).map { "\($0.file):\($0.line):\($0.column): error: \($0.message)" }.joined(separator: "\n")
            + (omitted > 0 ? "\n\(file): \(omitted) more error\(omitted == 1 ? "" : "s") not shown" : "")
    }

    /// How many problems the script has.
    package var count: Int { 1 + following.count + omitted }
}
