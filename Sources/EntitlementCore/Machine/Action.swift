/// What to do: the machine's only way to affect the world. Every request (`loadConfiguration`,
/// `callBackend`, `askProvider`) goes out with its deadline, a timer of the machine's own
/// (`TimerID.requestDeadline(_:)`) that its answer cancels. A `MachineStep` lists them as its effects
/// (beside its save, the secrets to draw and the calls to resubmit), and the actor runs them in order.
/// The cases with a large payload (requests, provider questions, the platform's) are `indirect`: an
/// action is a few words, moved without copying its request.
package enum Action: Sendable, Hashable {
    /// Call the delegate (and the callback stream); `answering` names the calls this callback ends.
    case emit(Callback, answering: [CallID])
    /// Fetch the configuration, then load the stored tokens (this requestor's, and the
    /// authentications other requestors stored on the device); answer with
    /// `Input.configurationLoaded(_:_:_:others:)` or `Input.configurationFailed(_:_:)`. (The chain's
    /// providers are asked next, by the machine: `askProvider`.)
    indirect case loadConfiguration(OperationID, BackendRequest)
    /// Ask a provider of the chain (credentials, a verification, a sign-in, a renewal, a sign-out),
    /// within the request deadline; answer with `Input.providerAnswered(_:_:)`.
    indirect case askProvider(OperationID, provider: String, ProviderRequest, ProviderSession)
    /// Send a backend request; answer with `Input.backendAnswered(_:_:)` or `Input.backendFailed(_:_:)`.
    indirect case callBackend(OperationID, BackendRequest)
    /// Show the platform's provider picker for a login flow, its sign-in answering the partner's
    /// `request`; answer with `Input.platformPickerAnswered(_:_:)` when the user has chosen (cookbook D).
    indirect case presentPlatformPicker(FlowID, TvProviderDialog, requestorID: String, request: V2PartnerRequest)
    /// Stop waiting for the platform's picker (the flow ended); a late answer is ignored.
    case dismissPlatformPicker(FlowID)
    /// Ask the platform, without UI, whether it is signed in to one of `mvpdIDs` (its assertion answering
    /// the partner's `request`); answer with `Input.platformSignInChecked(_:_:)`.
    indirect case checkPlatformSignIn(OperationID, requestorID: String, mvpdIDs: [String], request: V2PartnerRequest)
    /// Stop a request still running (its deadline passed: the machine has taken it as timed out, and a
    /// late answer is ignored). No effect if it already ended.
    case cancelRequest(OperationID)
    /// Start a timer.
    case startTimer(TimerID, at: Timestamp)
    /// Cancel a timer (no effect if it already fired).
    case cancelTimer(TimerID)
    /// Record something worth a debug log line (late results, joined calls).
    case log(EngineLog)
}

/// Debug-log events the machine reports; none carries a secret.
public enum EngineLog: Sendable, Hashable, CustomStringConvertible {
    /// A backend answer arrived for an operation that is no longer pending (cancelled, superseded, logged out).
    case lateResultIgnored(OperationID)
    /// A timer fired for a flow that has ended.
    case lateTimerIgnored(TimerID)
    /// Secrets arrived for a flow that has ended.
    case lateSecretsIgnored(FlowID)
    /// A call joined a running flow or request instead of starting another.
    case joined(CallID, flow: String)
    /// The platform picker answered for a flow that has ended.
    case latePickerAnswerIgnored(FlowID)
    /// The silent platform sign-in at `setRequestor` failed; the requestor is configured without it.
    case silentSignInFailed(String)
    /// The partner session gave no request for the platform (it fell back or failed): the login goes on
    /// with the provider dialog.
    case partnerSessionFellBack(String)
    /// The engine was closed (`AccessEnabler.closeSession()`), answering this many waiting calls `SESSION_CLOSED`.
    case sessionClosed(answered: Int)
    /// The requestor's configuration had failed (`failures` times in a row): a call configures it again.
    case configurationRetried(requestorID: String, failures: Int)

    /// How much the line matters: a configuration that failed and is tried again is a `warning` (the
    /// service was unreachable or refused); the rest are `debug`.
    public var level: LogLevel {
        switch self {
        case .configurationRetried, .sessionClosed: return .warning
        default: return .debug
        }
    }

    /// One log line.
    public var description: String {
        switch self {
        case .lateResultIgnored(let operation): "late backend result for \(operation) ignored"
        case .lateTimerIgnored(let timer): "late timer \(timer) ignored"
        case .lateSecretsIgnored(let flow): "late secrets for \(flow) ignored"
        case .joined(let call, let flow): "call \(call) joined \(flow)"
        case .latePickerAnswerIgnored(let flow): "late platform picker answer for \(flow) ignored"
        case .silentSignInFailed(let why): "silent sign-in at setRequestor failed: \(why)"
        case .partnerSessionFellBack(let why): "no platform picker: the partner session gave no request (\(why))"
        case .sessionClosed(let answered): "session closed; \(answered) waiting call\(answered == 1 ? "" : "s") answered SESSION_CLOSED"
        case .configurationRetried(let requestorID, let failures):
            "configuring '\(requestorID)' again for a call (it failed \(failures) time\(failures == 1 ? "" : "s") in a row)"
        }
    }
}
