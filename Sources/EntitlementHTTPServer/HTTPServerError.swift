/// Why the server could not start.
///
/// A struct, not an enum, so new reasons will not break a caller's `switch`: look at ``code``
/// (`error.code == .bind`) and ``errno``.
public struct HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure it is; more kinds may come.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String, Sendable, Hashable {
            case socket, bind
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// A socket call failed.
        public static let socket = Code(.socket)
        /// The port could not be bound.
        public static let bind = Code(.bind)

        /// The code's name (`bind`).
        public var description: String { kind.rawValue }
    }

    /// What kind of failure it is.
    public let code: Code
    /// The failed call's `errno`.
    public let errno: Int32
    /// The port that could not be bound (``Code/bind``).
    public let port: UInt16?

    private init(_ code: Code, errno: Int32, port: UInt16? = nil) {
        self.code = code
        self.errno = errno
        self.port = port
    }

    /// A socket call failed with this `errno`.
    package static func socket(_ errno: Int32) -> HTTPServerError { HTTPServerError(.socket, errno: errno) }
    /// The port could not be bound (`EADDRINUSE` when another process has it).
    package static func bind(port: UInt16, errno: Int32) -> HTTPServerError { HTTPServerError(.bind, errno: errno, port: port) }

    /// A sentence for the command line.
    public var description: String {
        guard code == .bind, let port else { return "socket error \(errno)" }
        return errno == 98 || errno == 48 ? "port \(port) is already in use" : "cannot listen on port \(port) (errno \(errno))"
    }
}
