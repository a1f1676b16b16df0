import EntitlementEngine
/// Why a trace cannot be read: the line and the reason. Nothing crashes on a bad trace.
public struct TraceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with a line.
    public enum Reason: Error, Sendable, Equatable {
        /// The line is not JSON (or holds a non-integer number).
        case notJSON(String)
        /// A required field is missing or has the wrong type.
        case field(String)
        /// The header is missing or not a header.
        case noHeader
        /// The format's major version is one this engine cannot read.
        case unsupportedFormat(String)
        /// Records are not numbered 1, 2, 3, …
        case sequence(expected: Int, found: Int64)
        /// The file ends in the middle of a line.
        case truncated
        /// The file could not be read (streaming replay): the system's reason.
        case unreadable(String)
    }

    /// The 1-based line.
    public var line: Int
    /// What is wrong.
    public var reason: Reason

    /// `line N: reason`.
    public var description: String {
        let text: String
        switch reason {
        case .notJSON(let why): text = "not a JSON record (\(why))"
        case .field(let name): text = "the field '\(name)' is missing or of the wrong type"
        case .noHeader: text = "the first line must be the trace header"
        case .unsupportedFormat(let format):
            text = "trace format \(format) is not supported: this engine reads format \(Trace.formatMajor).x; re-record the session with this version"
        case .sequence(let expected, let found): text = "expected seq \(expected), found \(found)"
        case .truncated: text = "the file ends in the middle of a record (truncated?)"
        case .unreadable(let why): text = "the file cannot be read: \(why)"
        }
        return "line \(line): \(text)"
    }
}
