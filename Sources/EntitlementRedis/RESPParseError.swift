/// Why bytes from a server are not RESP: where, and what is wrong. A connection that reads one is
/// closed: nothing after it can be trusted to start where the parser thinks.
package struct RESPParseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The offset of the offending byte in the stream the parser read.
    package var offset: Int
    /// What is wrong.
    package var reason: String

    /// Creates a parse error.
    package init(offset: Int, reason: String) {
        self.offset = offset
        self.reason = reason
    }

    /// `RESP: reason at byte N`.
    package var description: String { "RESP: \(reason) at byte \(offset)" }
}
