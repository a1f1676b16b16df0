#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The commands `entitle` understands (argument parsing is hand-written: no dependencies).
enum Command: Equatable {
    /// Run cookbook flows B, C, F, G and H against the embedded simulator.
    case demo
    /// Run scenario files and folders.
    case run([String])
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
          run PATH...
                    run .scenario files (folders are searched recursively): one line per
                    scenario, a report for each failure, then "N passed, N failed";
                    exit status 1 if any failed
          help      print this text
        """

    static func parse(_ arguments: [String]) -> Result<Command, UsageError> {
        guard let first = arguments.first else { return .failure(UsageError(message: "entitle: no command given")) }
        let rest = arguments.dropFirst()
        switch first {
        case "demo":
            guard rest.isEmpty else { return .failure(UsageError(message: "entitle demo: unexpected '\(rest.first!)'")) }
            return .success(.demo)
        case "run":
            guard !rest.isEmpty else { return .failure(UsageError(message: "entitle run: give at least one PATH")) }
            if let option = rest.first(where: { $0.hasPrefix("-") }) {
                return .failure(UsageError(message: "entitle run: unknown option '\(option)'"))
            }
            return .success(.run(Array(rest)))
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
