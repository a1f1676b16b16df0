import EntitlementSupport

extension ChildProcess {
    /// Starts `program` with `arguments`, its standard input from /dev/null, its output and errors
    /// appended to the files `output` and `errors` (or /dev/null); a failure to start is a fleet error.
    static func start(_ program: String, _ arguments: [String], output: String? = nil, errors: String? = nil) throws(FleetError)
        -> ChildProcess
    {
        do {
            return try spawn(program, arguments, output: output.map(Stream.file) ?? .null, errors: errors.map(Stream.file) ?? .null)
        } catch {
            throw FleetError(error.description)
        }
    }
}
