import EntitlementEngine
/// Why a trace cannot be read: the line and the reason. Nothing crashes on a bad trace.
public struct TraceError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong with a line: a sentence. A struct, not an enum: a check added later breaks no
    /// caller's `switch`.
    public struct Reason: Error, Sendable, Hashable, CustomStringConvertible {
        /// What is wrong, in a sentence.
        public let description: String

        /// The line is not JSON (or holds a non-integer number).
        package static func notJSON(_ why: String) -> Reason { Reason(description: "not a JSON record (\(why))") }
        /// A required field is missing or has the wrong type.
        package static func field(_ name: String) -> Reason {
            Reason(description: "the field '\(name)' is missing or of the wrong type")
        }
        /// The header is missing or not a header.
        package static let noHeader = Reason(description: "the first line must be the trace header")
        /// The format's major version is one this engine cannot read.
        package static func unsupportedFormat(_ format: String) -> Reason {
            Reason(
                description:
                    "trace format \(format) is not supported: this engine reads format \(Trace.formatMajor).x; re-record the session with this version")
        }
        /// Records are not numbered 1, 2, 3, …
        package static func sequence(expected: Int, found: Int64) -> Reason {
            Reason(description: "expected seq \(expected), found \(found)")
        }
        /// The file ends in the middle of a line.
        package static let truncated = Reason(description: "the file ends in the middle of a record (truncated?)")
        /// The file could not be read (streaming replay): the system's reason.
        package static func unreadable(_ why: String) -> Reason { Reason(description: "the file cannot be read: \(why)") }
    }

    /// The 1-based line.
    public var line: Int
    /// What is wrong.
    public var reason: Reason

    /// `line N: reason`.
    public var description: String { "line \(line): \(reason)" }
}
