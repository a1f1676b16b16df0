/// Why an answer from Adobe Pass REST API V2 could not be read: where (a JSON path such as
/// `decisions[0].token.notAfter`) and what was wrong. A malformed answer is never half-read.
public struct V2DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where in the answer, as a JSON path (`$` is the whole answer).
    public var path: String
    /// What was wrong there.
    public var reason: String

    /// Creates an error.
    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    /// `path: reason`.
    public var description: String { "\(path): \(reason)" }
}
