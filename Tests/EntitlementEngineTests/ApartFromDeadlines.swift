import EntitlementCore

extension Array where Element == Action {
    /// The actions but the request deadlines the machine starts beside every request and cancels with
    /// every answer (`RequestDeadlineTests` holds those), for tests about the rest of a step.
    var apartFromDeadlines: [Action] {
        filter {
            switch $0 {
            case .startTimer(.requestDeadline, _), .cancelTimer(.requestDeadline): false
            default: true
            }
        }
    }
}
