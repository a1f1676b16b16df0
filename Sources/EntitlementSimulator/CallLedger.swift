import EntitlementEngine
import Synchronization

/// Records every call and callback of one engine and checks the exactly-once rule: each accepted
/// call is answered by exactly one terminal callback of a kind its call allows (or by one `status`
/// refusal), and no callback answers a call twice or a call that does not exist.
///
/// It is the engine's `EngineMonitor`; tests read what arrived with ``take()`` (or, with the
/// backend requests between the callbacks, `takeEntries()`) and end with
/// ``violations(pending:)`` (leftovers fail, as in TCA's TestStore).
public final class CallLedger: EngineMonitor {
    /// What the engine showed the outside world, in order: a callback, a request to the backend, or a
    /// question to a provider of the chain.
    package enum Entry: Sendable, Hashable {
        /// A delegate callback.
        case callback(Callback)
        /// A request the engine sent to its backend.
        case backendRequest(BackendRequest)
        /// A request the engine sent to a provider of the chain (by its id).
        case providerRequest(provider: String, ProviderRequest)

        /// The callback, if this is one.
        package var callback: Callback? { if case .callback(let callback) = self { callback } else { nil } }
        /// The request, if this is one.
        package var backendRequest: BackendRequest? { if case .backendRequest(let request) = self { request } else { nil } }
    }

    private struct State {
        var calls: [(CallID, EntitlementCall)] = []
        var answers: [CallID: [Callback]] = [:]
        var problems: [String] = []
        var entries: [Entry] = []
        /// How many entries have been taken.
        var taken = 0
        var logs: [EngineLog] = []
        var checked = false
        var transitions: Set<TransitionRow> = []
    }

    private let state = Mutex(State())
    private let echo: (@Sendable (EngineEvent) -> Void)?

    /// Creates a ledger; `echo` sees every event as it happens (the demo prints them).
    public init(echo: (@Sendable (EngineEvent) -> Void)? = nil) { self.echo = echo }

    /// Records one event.
    public func observe(_ event: EngineEvent) {
        state.withLock { state in
            switch event {
            case .callReceived(let id, let call):
                state.calls.append((id, call))
            case .callbackEmitted(let callback, let answering):
                state.entries.append(.callback(callback))
                for id in answering {
                    guard let call = state.calls.first(where: { $0.0 == id })?.1 else {
                        state.problems.append("\(callback.redactedDescription) answers \(id), which was never made")
                        continue
                    }
                    if !Self.mayAnswer(callback, call) {
                        state.problems.append(
                            "\(callback.redactedDescription) cannot answer \(id) \(call.redactedDescription)")
                    }
                    state.answers[id, default: []].append(callback)
                }
            case .log(let log):
                state.logs.append(log)
            case .backendRequested(_, let sent):
                state.entries.append(.backendRequest(sent.request))
            case .providerAsked(_, let provider, let request):
                state.entries.append(.providerRequest(provider: provider, request))
            case .transition(let row):
                state.transitions.insert(row)
                if !TransitionTable.rowSet.contains(row) {
                    state.problems.append("the machine took a transition the table does not list: \(row)")
                }
            case .backendFinished, .storageFailed, .started, .inputHandled:
                break
            }
        }
        echo?(event)
    }

    /// Which terminal callbacks may answer which call (the call-semantics table).
    package static func mayAnswer(_ callback: Callback, _ call: EntitlementCall) -> Bool {
        if case .status = callback { return true }
        switch (call, callback) {
        case (.setRequestor, .setRequestorComplete): return true
        case (.checkAuthentication, .setAuthenticationStatus), (.getAuthentication, .setAuthenticationStatus),
            (.setSelectedProvider, .setAuthenticationStatus), (.handleExternalURL, .setAuthenticationStatus),
            (.logout, .setAuthenticationStatus):
            return true
        case (.getSelectedProvider, .selectedProvider): return true
        case (.checkAuthorization(let resource, _), .setToken(_, let answered)),
            (.getAuthorization(let resource, _), .setToken(_, let answered)),
            (.checkAuthorization(let resource, _), .tokenRequestFailed(let answered, _, _)),
            (.getAuthorization(let resource, _), .tokenRequestFailed(let answered, _, _)):
            return resource == answered
        case (.checkPreauthorizedResources, .preauthorizedResources): return true
        case (.getMetadata(let key), .setMetadataStatus(_, _, let answered)): return key == answered
        case (.completeStepUp(let resource, _), .setToken(_, let answered)),
            (.completeStepUp(let resource, _), .tokenRequestFailed(let answered, _, _)):
            return resource == answered
        case (.signIn(let provider, _), .providerSignInStatus(let answered, _, _, _)),
            (.signOut(let provider), .providerSignInStatus(let answered, _, _, _)):
            return provider == answered
        default: return false
        }
    }

    // MARK: - Reading

    /// Every callback so far, in order.
    public var callbacks: [Callback] { state.withLock { $0.entries.compactMap(\.callback) } }

    /// The callbacks that arrived since the last `take` or `takeEntries`, in order.
    public func take() -> [Callback] {
        takeEntries().compactMap(\.callback)
    }

    /// The callbacks, backend requests and provider requests since the last `take` or `takeEntries`, in order.
    package func takeEntries() -> [Entry] {
        state.withLock { state in
            defer { state.taken = state.entries.count }
            return Array(state.entries[state.taken...])
        }
    }

    /// Like ``take()`` without `sendTrackingData`, for tests that do not care about tracking.
    public func takeIgnoringTracking() -> [Callback] {
        take().filter { if case .sendTrackingData = $0 { false } else { true } }
    }

    /// The distinct transitions the machine took so far.
    package var transitions: Set<TransitionRow> { state.withLock { $0.transitions } }

    /// The debug-log events so far.
    package var logs: [EngineLog] { state.withLock { $0.logs } }

    /// The backend operations requested so far, in order.
    package var backendRequests: [BackendOperation] { state.withLock { $0.entries.compactMap { $0.backendRequest?.operation } } }

    /// Whether ``violations(pending:)`` has been asked at least once.
    package var wasChecked: Bool { state.withLock { $0.checked } }

    /// The callbacks that answered `id`.
    public func answers(to id: CallID) -> [Callback] { state.withLock { $0.answers[id] ?? [] } }

    /// Every breach of the exactly-once rule, plus calls still unanswered that are not in `pending`,
    /// plus callbacks nobody has taken yet. Empty means the run was clean.
    public func violations(pending: Set<CallID> = []) -> [String] {
        state.withLock { state in
            state.checked = true
            var problems = state.problems
            for (id, call) in state.calls {
                let answers = state.answers[id] ?? []
                if answers.count > 1 {
                    problems.append(
                        "\(id) \(call.redactedDescription) answered \(answers.count) times: "
                            + answers.map(\.redactedDescription).joined(separator: ", "))
                } else if answers.isEmpty && !pending.contains(id) {
                    problems.append("\(id) \(call.redactedDescription) got no terminal callback")
                } else if !answers.isEmpty && pending.contains(id) {
                    problems.append("\(id) \(call.redactedDescription) was expected to stay pending but was answered")
                }
            }
            let unchecked = state.entries[state.taken...].compactMap(\.callback)
            if !unchecked.isEmpty {
                problems.append("callbacks nobody checked: " + unchecked.map(\.redactedDescription).joined(separator: ", "))
            }
            return problems
        }
    }
}
