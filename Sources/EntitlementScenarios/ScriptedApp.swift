import EntitlementEngine
import Synchronization

/// The app a scenario plays, as the engine's delegate: when a callback the script named arrives
/// (`! app on CALLBACK will call CALL`), it makes the call from inside that callback — from a
/// task, as a real delegate must — and the runner waits for it before the script goes on.
final class ScriptedApp: AccessEnablerDelegate {
    /// A call to make when a callback arrives.
    typealias Reaction = @Sendable (AccessEnabler) async -> Void

    private struct State {
        var enabler: AccessEnabler?
        var reactions: [(callback: String, call: Reaction)] = []
        var started: [Task<Void, Never>] = []
        var transactionShown: String?
    }

    private let state = Mutex(State())

    /// The engine the reactions call (set once the session exists: the engine holds its delegate weakly).
    func attach(_ enabler: AccessEnabler) { state.withLock { $0.enabler = enabler } }

    /// Makes `call` the next time `callback` arrives (once).
    func on(_ callback: String, call: @escaping Reaction) { state.withLock { $0.reactions.append((callback, call)) } }

    /// The transaction of the last step-up this app was asked for (the one its PIN page shows).
    var transactionShown: String? { state.withLock { $0.transactionShown } }

    /// The reactions not used yet, by callback name.
    var unused: [String] { state.withLock { $0.reactions.map(\.callback) } }

    /// Waits for every call made from a callback so far; false when there was none.
    func finishCalls() async -> Bool {
        let tasks = state.withLock { state in
            defer { state.started.removeAll() }
            return state.started
        }
        for task in tasks { await task.value }
        return !tasks.isEmpty
    }

    private func arrived(_ callback: String) {
        state.withLock { state in
            guard let enabler = state.enabler, let index = state.reactions.firstIndex(where: { $0.callback == callback }) else { return }
            let call = state.reactions.remove(at: index).call
            state.started.append(Task { await call(enabler) })
        }
    }

    func setRequestorComplete(_ success: Bool) { arrived("setRequestorComplete") }
    func displayProviderDialog(_ mvpds: [MVPD]) { arrived("displayProviderDialog") }
    func setAuthenticationStatus(_ status: Int, errorCode: String) { arrived("setAuthenticationStatus") }
    func navigateToUrl(_ url: String) { arrived("navigateToUrl") }
    func sendTrackingData(_ data: [String], forEventType event: TrackingEvent) { arrived("sendTrackingData") }
    func setToken(_ token: String, forResource resource: String) { arrived("setToken") }
    func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) { arrived("tokenRequestFailed") }
    func selectedProvider(_ mvpd: MVPD?) { arrived("selectedProvider") }
    func setMetadataStatus(_ metadata: MetadataValue?, encrypted: Bool, forKey key: MetadataKey) { arrived("setMetadataStatus") }
    func preauthorizedResources(_ resources: [String]) { arrived("preauthorizedResources") }
    func presentTvProviderDialog(_ dialog: TvProviderDialog) { arrived("presentTvProviderDialog") }
    func dismissTvProviderDialog(_ dialog: TvProviderDialog) { arrived("dismissTvProviderDialog") }
    func status(_ report: StatusReport) { arrived("status") }
    func stepUpRequired(_ resource: String, advice: StepUpAdvice) {
        state.withLock { $0.transactionShown = advice.transactionID }
        arrived("stepUpRequired")
    }
}
