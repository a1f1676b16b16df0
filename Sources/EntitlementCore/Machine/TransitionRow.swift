/// One row of the machine's transition table: in `region`, from state `from`, on `input`, when
/// `condition` holds, to state `to`, doing `actions`. The charts in `StateCharts/` draw exactly
/// these rows (`from --> to : input [condition] / action, action`).
public struct TransitionRow: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The machine's orthogonal regions.
    package enum Region: String, Sendable, Hashable, CaseIterable, Comparable {
        /// Configuration and the queue of held calls.
        case configuration
        /// Login flows and logout.
        case authentication
        /// One small machine per resource being authorized (`idle` when none runs).
        case authorization
        /// Every call's first stop: argument refusals, read-only answers, and one small machine per
        /// pre-authorization or metadata read waiting for the backend (`idle` otherwise).
        case calls
        /// With a provider chain: watches what the user may access, and says when it changed.
        case entitlements
        /// One small machine per provider of the chain that takes a sign-in (`EntitlementMachine.AccountKind`).
        case accounts

        /// Orders regions as listed.
        package static func < (lhs: Region, rhs: Region) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }

        /// The region's states, in chart order.
        package var states: [String] {
            switch self {
            case .configuration: ConfigurationState.Kind.allCases.map(\.rawValue)
            case .authentication: AuthenticationState.Kind.allCases.map(\.rawValue)
            case .authorization: AuthorizationRequest.Kind.allCases.map(\.rawValue)
            case .calls: PendingCallKind.allCases.map(\.rawValue)
            case .entitlements: EntitlementsWatch.allCases.map(\.rawValue)
            case .accounts: EntitlementMachine.AccountKind.allCases.map(\.rawValue)
            }
        }

        /// The state the region starts in.
        package var initialState: String { states[0] }
    }

    /// The region.
    package var region: Region
    /// The state before.
    package var from: String
    /// The input: a call's name, another `Input` case, `entitlementCall` (any call but
    /// `setRequestor`, as the configuration region sees it) or `authenticationExpired`.
    package var input: String
    /// The condition that selects this row, if the input has several.
    package var condition: String?
    /// The state after.
    package var to: String
    /// What the machine does, in order.
    package var actions: [String]

    /// Creates a row.
    package init(
        region: Region, from: String, input: String, condition: String? = nil, to: String, actions: [String] = []
    ) {
        self.region = region
        self.from = from
        self.input = input
        self.condition = condition
        self.to = to
        self.actions = actions
    }

    /// Orders rows by region, source state, input, condition and target.
    public static func < (lhs: TransitionRow, rhs: TransitionRow) -> Bool {
        (lhs.region, lhs.from, lhs.input, lhs.condition ?? "", lhs.to, lhs.actions.joined(separator: ","))
            < (rhs.region, rhs.from, rhs.input, rhs.condition ?? "", rhs.to, rhs.actions.joined(separator: ","))
    }

    /// The row as a chart line: `from --> to : input [condition] / action, action`.
    package var chartLine: String {
        var label = input
        if let condition { label += " [\(condition)]" }
        if !actions.isEmpty { label += " / " + actions.joined(separator: ", ") }
        return "\(from) --> \(to) : \(label)"
    }

    /// `region: from --> to : input [condition] / actions`.
    public var description: String { "\(region.rawValue): \(chartLine)" }
}
