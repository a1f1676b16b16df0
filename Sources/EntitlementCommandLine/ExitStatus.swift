/// What `entitle` exits with, following the BSD `sysexits` conventions where one applies.
package enum ExitStatus: Int32 {
    /// Everything worked (scenarios passed, traces replayed, the server stopped cleanly).
    case success = 0
    /// The command ran and found a failure: a scenario failed, a trace diverged, a fuzz case failed.
    case failure = 1
    /// An input was read but is not valid: a script, trace or world file that does not parse.
    case invalidInput = 2
    /// The command line is wrong (`EX_USAGE`).
    case usage = 64
    /// An input file does not exist or cannot be read (`EX_NOINPUT`).
    case noInput = 66
    /// A needed service is unavailable, such as a port already in use (`EX_UNAVAILABLE`).
    case unavailable = 69
    /// An output file cannot be written (`EX_CANTCREAT`).
    case cannotCreate = 73

    /// The status that says more of this one and `other`: an unusable input outranks a failure,
    /// which outranks success.
    package func worse(_ other: ExitStatus) -> ExitStatus {
        func rank(_ status: ExitStatus) -> Int {
            switch status {
            case .success: 0
            case .failure: 1
            case .invalidInput: 2
            default: 3
            }
        }
        return rank(other) > rank(self) ? other : self
    }
}
