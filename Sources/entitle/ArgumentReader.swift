/// Reads one command's arguments: options (`--name` with or without a value) and operands, and
/// names whatever it cannot use with a "did you mean".
struct ArgumentReader {
    /// The command being read (`run`, `bench serve`), for messages.
    let command: String
    /// The options the command knows, for suggestions.
    let options: [String]
    private var rest: ArraySlice<String>

    init(_ arguments: some Collection<String>, command: String, options: [String]) {
        self.command = command
        self.options = options
        rest = ArraySlice(arguments)
    }

    /// Whether every argument has been read.
    var isEmpty: Bool { rest.isEmpty }

    /// The next argument, if any.
    mutating func next() -> String? { rest.popFirst() }

    /// The value following `option`.
    mutating func value(of option: String) throws(UsageError) -> String {
        guard let value = rest.popFirst() else { throw error("'\(option)' needs a value") }
        return value
    }

    /// The value following `option` as a whole number in `range`.
    mutating func number(of option: String, in range: ClosedRange<Int>) throws(UsageError) -> Int {
        let value = try value(of: option)
        guard let number = Int(value), range.contains(number) else {
            throw error("\(option) takes a whole number from \(range.lowerBound) to \(range.upperBound), not '\(value)'")
        }
        return number
    }

    /// The value following `option` as a seed (0 or more).
    mutating func seed(of option: String) throws(UsageError) -> UInt64 {
        let value = try value(of: option)
        guard let number = UInt64(value) else { throw error("\(option) takes a seed (a whole number, 0 or more), not '\(value)'") }
        return number
    }

    /// The error for an argument starting with `-` that is not one of ``options``.
    func unknownOption(_ option: String) -> UsageError {
        error("unknown option " + UsageError.named(option, among: options))
    }

    /// The error for an operand the command does not take.
    func unexpected(_ argument: String) -> UsageError {
        argument.hasPrefix("-") ? unknownOption(argument) : error("unexpected argument '\(argument)'")
    }

    /// A usage error of this command.
    func error(_ message: String) -> UsageError {
        UsageError("entitle \(command): \(message)", command: command.split(separator: " ").first.map(String.init))
    }
}
