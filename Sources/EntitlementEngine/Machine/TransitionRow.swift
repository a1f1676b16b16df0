/// One transition the machine took: in `region`, from state `from` on input `input` to state `to`.
///
/// Rows are derived from the regions' state names before and after each input, so they cannot
/// disagree with the code. A call produces a row in the region that handles it even when the
/// state stays the same (a self-transition such as queueing); any other input produces rows only
/// for the regions it changed. The authorization region is one small machine per resource, in
/// state `idle` when no request for it runs.
public struct TransitionRow: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The machine's regions.
    public enum Region: String, Sendable, Hashable, CaseIterable, Comparable {
        /// Configuration and the queue of held calls.
        case configuration
        /// Login flows and logout.
        case authentication
        /// The per-resource authorization requests.
        case authorization

        /// Orders regions as listed.
        public static func < (lhs: Region, rhs: Region) -> Bool {
            allCases.firstIndex(of: lhs)! < allCases.firstIndex(of: rhs)!
        }
    }

    /// The region.
    public var region: Region
    /// The state before.
    public var from: String
    /// The input's name (a call's name, or the input case).
    public var input: String
    /// The state after.
    public var to: String

    /// Creates a row.
    public init(region: Region, from: String, input: String, to: String) {
        self.region = region
        self.from = from
        self.input = input
        self.to = to
    }

    /// Orders rows by region, then source state, input and target.
    public static func < (lhs: TransitionRow, rhs: TransitionRow) -> Bool {
        (lhs.region, lhs.from, lhs.input, lhs.to) < (rhs.region, rhs.from, rhs.input, rhs.to)
    }

    /// `region: from --> to : input`.
    public var description: String { "\(region.rawValue): \(from) --> \(to) : \(input)" }
}

extension EntitlementMachine {
    /// The state names of every region: what transition rows are made of.
    public struct RegionStates: Sendable, Hashable {
        /// The configuration region's state.
        public var configuration: String
        /// The authentication region's state.
        public var authentication: String
        /// Each resource's authorization request state (absent: `idle`).
        public var authorizations: [String: String]
    }

    /// The state names of every region now.
    public var regionStates: RegionStates {
        var requests: [String: String] = [:]
        for request in authorizations { requests[request.resource] = request.phase.name }
        return RegionStates(configuration: configuration.name, authentication: authentication.name, authorizations: requests)
    }

    /// The rows `input` took between `before` and `after`.
    public static func transitions(from before: RegionStates, on input: Input, to after: RegionStates) -> [TransitionRow] {
        var rows: [TransitionRow] = []
        let name = input.name
        func row(_ region: TransitionRow.Region, _ from: String, _ to: String) {
            rows.append(TransitionRow(region: region, from: from, input: name, to: to))
        }
        var owner: TransitionRow.Region?
        var resource: String?
        if case .callReceived(_, let call) = input {
            switch call {
            case .setRequestor: owner = .configuration
            case _ where before.configuration != "configured": owner = .configuration
            case .checkAuthorization(let name, _), .getAuthorization(let name, _):
                owner = .authorization
                resource = name
            default: owner = .authentication
            }
        }
        if before.configuration != after.configuration || owner == .configuration {
            row(.configuration, before.configuration, after.configuration)
        }
        if before.authentication != after.authentication || owner == .authentication {
            row(.authentication, before.authentication, after.authentication)
        }
        let resources = Set(before.authorizations.keys).union(after.authorizations.keys).union(resource.map { [$0] } ?? [])
        for name in resources.sorted() {
            let from = before.authorizations[name] ?? "idle", to = after.authorizations[name] ?? "idle"
            if from != to || name == resource { row(.authorization, from, to) }
        }
        return rows
    }
}

extension ConfigurationState {
    /// The state's name.
    public var name: String {
        switch self {
        case .unconfigured: "unconfigured"
        case .configuring: "configuring"
        case .configured: "configured"
        case .failed: "failed"
        }
    }
}

extension AuthenticationState {
    /// The state's name.
    public var name: String {
        switch self {
        case .unknown: "unknown"
        case .unauthenticated: "unauthenticated"
        case .selectingProvider: "selectingProvider"
        case .preparingLogin: "preparingLogin"
        case .awaitingRedirect: "awaitingRedirect"
        case .exchangingCode: "exchangingCode"
        case .authenticated: "authenticated"
        case .preparingLogout: "preparingLogout"
        case .loggingOut: "loggingOut"
        }
    }
}

extension AuthorizationRequest.Phase {
    /// The phase's name.
    public var name: String {
        switch self {
        case .waitingForAuthentication: "waitingForAuthentication"
        case .authorizing: "authorizing"
        case .fetchingMediaToken: "fetchingMediaToken"
        }
    }
}

extension Input {
    /// The input's name: a call's name, or the input case.
    public var name: String {
        switch self {
        case .callReceived(_, let call): call.name
        case .optionsChanged: "optionsChanged"
        case .configurationLoaded: "configurationLoaded"
        case .configurationFailed: "configurationFailed"
        case .flowSecretsDrawn: "flowSecretsDrawn"
        case .backendAnswered: "backendAnswered"
        case .backendFailed: "backendFailed"
        case .timerFired: "timerFired"
        }
    }
}
