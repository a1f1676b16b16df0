/// Why the server could not start.
public enum HTTPServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A socket call failed with this `errno`.
    case socket(Int32)
    /// The port could not be bound (`EADDRINUSE` when another process has it).
    case bind(port: UInt16, errno: Int32)

    /// A sentence for the command line.
    public var description: String {
        switch self {
        case .socket(let code): "socket error \(code)"
        case .bind(let port, let code): code == 98 || code == 48 ? "port \(port) is already in use" : "cannot listen on port \(port) (errno \(code))"
        }
    }
}
