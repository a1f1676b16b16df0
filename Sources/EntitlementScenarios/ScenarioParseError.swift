/// A script the parser refuses: file, line and column, and why.
public struct ScenarioParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A reason with the column it points at.
    enum Reason: Error, Sendable, Hashable {
        case at(Int, String)
    }

    /// The file.
    public var file: String
    /// 1-based line.
    public var line: Int
    /// 1-based column.
    public var column: Int
    /// What is wrong.
    public var message: String

    /// Creates a parse error.
    public init(file: String, line: Int, column: Int, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.message = message
    }

    /// `file:line:column: error: message`, the form editors and CI logs understand.
    public var description: String { "\(file):\(line):\(column): error: \(message)" }
}
