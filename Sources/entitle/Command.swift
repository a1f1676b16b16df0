#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands `entitle` understands (argument parsing is hand-written: no dependencies).
enum Command: Equatable {
    /// Run cookbook flows B, C, F, G and H against the embedded simulator.
    case demo
    /// Print usage.
    case help

    /// A command line that could not be understood.
    struct UsageError: Error, Equatable {
        let message: String
    }

    static let usage = """
        usage: entitle COMMAND

        commands:
          demo      run cookbook flows B, C, F, G and H against the embedded simulator
                    and print the transcript (secrets shortened)
          help      print this text
        """

    static func parse(_ arguments: [String]) -> Result<Command, UsageError> {
        guard let first = arguments.first else { return .failure(UsageError(message: "entitle: no command given")) }
        let rest = arguments.dropFirst()
        switch first {
        case "demo":
            guard rest.isEmpty else { return .failure(UsageError(message: "entitle demo: unexpected '\(rest.first!)'")) }
            return .success(.demo)
        case "help", "-h", "--help":
            return .success(.help)
        default:
            return .failure(UsageError(message: "entitle: unknown command '\(first)'"))
        }
    }
}

/// Writes to standard error.
enum StandardError {
    static func write(_ text: String) {
        var bytes = Array(text.utf8)
        _ = bytes.withUnsafeMutableBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    }
}
