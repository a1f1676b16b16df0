/// Identifies one login or logout flow; a flow's redirect `state`, deadline timer and secrets
/// belong to it, so results for an older flow are recognised as late.
public struct FlowID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The flow's sequence number within one machine.
    public var rawValue: UInt64
    /// Wraps a sequence number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    /// Orders flows by creation.
    public static func < (lhs: FlowID, rhs: FlowID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `flow#n`.
    public var description: String { "flow#\(rawValue)" }
}

/// Identifies one backend request; its answer is accepted only while the request is still pending.
public struct OperationID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The operation's sequence number within one machine.
    public var rawValue: UInt64
    /// Wraps a sequence number.
    public init(_ rawValue: UInt64) { self.rawValue = rawValue }
    /// Orders operations by creation.
    public static func < (lhs: OperationID, rhs: OperationID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `op#n`.
    public var description: String { "op#\(rawValue)" }
}

/// The timers the machine starts.
public enum TimerID: Sendable, Hashable, CustomStringConvertible {
    /// The deadline of a pending login or logout redirect.
    case redirectDeadline(FlowID)
    /// The next poll for a second-screen login (cookbook E).
    case registrationPoll(FlowID)
    /// The end of a second-screen login's registration code.
    case registrationExpiry(FlowID)
    /// The next read of a login's profile that was not there yet.
    case profileRead(FlowID)
    /// The next attempt of a request the service asked to retry (an enhanced error with `action: retry`).
    case retry(OperationID)
    /// The next verification of a provider of the chain that verifies on an interval.
    case providerVerification(String)
    /// The end of the wait for a step-up, after the answer (operation) that asked for it.
    case stepUp(OperationID)
    /// The end of another instance's renewal of a provider's user token (by provider id), which
    /// requests here wait for.
    case renewalElsewhere(String)

    /// The timer's name.
    public var name: String {
        switch self {
        case .redirectDeadline: "redirectDeadline"
        case .registrationPoll: "registrationPoll"
        case .registrationExpiry: "registrationExpiry"
        case .profileRead: "profileRead"
        case .retry: "retry"
        case .providerVerification: "providerVerification"
        case .stepUp: "stepUp"
        case .renewalElsewhere: "renewalElsewhere"
        }
    }

    /// The flow the timer belongs to (nil for a request's retry).
    public var flow: FlowID? {
        switch self {
        case .redirectDeadline(let flow), .registrationPoll(let flow), .registrationExpiry(let flow), .profileRead(let flow):
            flow
        case .retry, .providerVerification, .stepUp, .renewalElsewhere: nil
        }
    }

    /// `redirectDeadline(flow#n)`, `retry(op#n)`.
    public var description: String {
        switch self {
        case .retry(let operation), .stepUp(let operation): "\(name)(\(operation))"
        case .providerVerification(let provider), .renewalElsewhere(let provider): "\(name)(\(provider))"
        default: "\(name)(\(flow.map(\.description) ?? ""))"
        }
    }
}

/// The random value drawn for one flow: the `state` the engine puts in the `redirectUrl` it sends,
/// which binds the redirect to the flow.
package struct FlowSecrets: Sendable, Hashable {
    /// The 256-bit `state`, base64url (a secret).
    package var state: String

    /// Creates flow secrets.
    package init(state: String) {
        self.state = state
    }
}
