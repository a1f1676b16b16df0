/// Identifies one login or logout flow; a flow's redirect `state`, deadline timer and secrets
/// belong to it, so results for an older flow are recognised as late.
public struct FlowID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The flow's sequence number within one machine.
    package var rawValue: UInt64
    /// Wraps a sequence number.
    package init(_ rawValue: UInt64) { self.rawValue = rawValue }
    /// Orders flows by creation.
    public static func < (lhs: FlowID, rhs: FlowID) -> Bool { lhs.rawValue < rhs.rawValue }
    /// `flow#n`.
    public var description: String { "flow#\(rawValue)" }
}

/// Identifies one request the machine sends (to the backend, a provider or the platform) and the
/// region that sent it: its answer goes to that region, and is accepted only while the request is
/// still pending there.
public struct OperationID: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The part of the machine that sent a request and takes its answer.
    package enum Owner: UInt8, Sendable, Hashable {
        /// The requestor's configuration (and the silent sign-in that ends it).
        case configuration
        /// A login or logout flow.
        case authentication
        /// An authorization (its decision, a provider's credentials, a step-up's wait).
        case authorization
        /// A pre-authorization.
        case preauthorization
        /// A provider account: a sign-in, sign-out, verification or renewal.
        case account
    }

    /// The sequence number (low 56 bits) and the owner (high 8 bits, 0 for none) in one word: an id
    /// costs a session no more than its number did.
    private var bits: UInt64
    private static let numberMask: UInt64 = (1 << 56) - 1

    /// The operation's sequence number within one machine.
    public var rawValue: UInt64 { bits & Self.numberMask }
    /// The region that sent the request; nil for a number read back from a trace, which names no
    /// owner until a replay matches it with the request the machine sent.
    package var owner: Owner? {
        let tag = UInt8(truncatingIfNeeded: bits >> 56)
        return tag == 0 ? nil : Owner(rawValue: tag - 1)
    }
    /// Wraps a sequence number (its low 56 bits) and the region that owns it.
    package init(_ rawValue: UInt64, owner: Owner?) {
        bits = (rawValue & Self.numberMask) | (UInt64(owner.map { $0.rawValue + 1 } ?? 0) << 56)
    }
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
    /// The end of the wait for a request's answer (``EngineSettings/requestTimeout`` after it went out):
    /// the request fails as timed out and the shell stops it.
    case requestDeadline(OperationID)

    /// The timer's name.
    package var name: String {
        switch self {
        case .redirectDeadline: "redirectDeadline"
        case .registrationPoll: "registrationPoll"
        case .registrationExpiry: "registrationExpiry"
        case .profileRead: "profileRead"
        case .retry: "retry"
        case .providerVerification: "providerVerification"
        case .stepUp: "stepUp"
        case .renewalElsewhere: "renewalElsewhere"
        case .requestDeadline: "requestDeadline"
        }
    }

    /// The flow the timer belongs to (nil for a request's retry).
    package var flow: FlowID? {
        switch self {
        case .redirectDeadline(let flow), .registrationPoll(let flow), .registrationExpiry(let flow), .profileRead(let flow):
            flow
        case .retry, .providerVerification, .stepUp, .renewalElsewhere, .requestDeadline: nil
        }
    }

    /// `redirectDeadline(flow#n)`, `retry(op#n)`.
    public var description: String {
        switch self {
        case .retry(let operation), .stepUp(let operation), .requestDeadline(let operation): "\(name)(\(operation))"
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
