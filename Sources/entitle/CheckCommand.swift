import EntitlementFuzzing

/// `entitle check`: the fleet model check.
enum CheckCommand {
    /// Runs the check within `bounds` and prints its report; true when every promise held.
    static func run(_ bounds: FleetChecker.Bounds, all: Bool) -> Bool {
        print(
            "checking \(bounds.nodes) nodes of one \(bounds.secondScreen ? "TV with a second screen" : bounds.stepUp ? "device authorizing with step-ups" : bounds.subscription ? "device with a direct subscription" : "device"): depth \(bounds.depth), "
                + "\(bounds.calls) calls, \(bounds.userActions) user actions, \(bounds.faults) faults")
        let report = FleetChecker(bounds: bounds, keepsGoing: all).run { depth, states in
            print("depth \(depth): \(states) states")
        }
        for counterexample in report.counterexamples {
            print("the shortest interleaving that breaks a promise (\(counterexample.events.count) events), as a script `entitle run` plays:")
            print(FleetScript.text(of: counterexample, within: bounds))
        }
        print(report.description)
        return report.counterexample == nil
    }
}
