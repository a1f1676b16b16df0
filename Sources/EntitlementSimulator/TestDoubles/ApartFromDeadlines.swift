import EntitlementEngine

extension Array where Element == Action {
    /// The actions but the request deadlines the machine starts beside every request and cancels with
    /// every answer (the Core tests' `RequestDeadlineTests` hold those), for tests about the rest of a step.
    package var apartFromDeadlines: [Action] {
        filter {
            switch $0 {
            case .startTimer(.requestDeadline, _), .cancelTimer(.requestDeadline): false
            default: true
            }
        }
    }
}

extension MachineStep {
    /// The step but its request deadlines (`Array.apartFromDeadlines`).
    package var apartFromDeadlines: MachineStep {
        var step = self
        step.effects = effects.apartFromDeadlines
        return step
    }
}
