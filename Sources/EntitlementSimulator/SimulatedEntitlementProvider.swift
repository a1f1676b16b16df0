import EntitlementEngine
import EntitlementSupport
import Synchronization

/// A provider of the chain for scripts and tests: it claims the resources the world (or a script's
/// `! provider P grants …`) gives it, mints numbered credentials, and fails on demand with any
/// `ProviderFailure`. Every engine of a world shares it.
package final class SimulatedEntitlementProvider: EntitlementProvider {
    /// Which of the provider's questions a fault applies to.
    package enum Question: String, Sendable, Hashable, CaseIterable {
        /// `verify(_:)`.
        case verify
        /// `credentials(for:_:)`.
        case credentials
    }

    private struct State {
        var grants: Set<String>
        var message: String?
        var faults: [Question: (failure: ProviderFailure, untilHealed: Bool)] = [:]
        var minted: [String] = []
        var asked: [String] = []
    }

    /// The provider's id.
    package let id: String
    /// Whether it takes one credentials request at a time.
    package let requestsOneAtATime: Bool
    private let state: Mutex<State>

    /// A provider as the world declares it.
    package init(_ declaration: SimulatedWorld.ChainProvider) {
        id = declaration.id
        requestsOneAtATime = declaration.requestsOneAtATime
        state = Mutex(State(grants: declaration.grants, message: declaration.message))
    }

    /// From now on the provider claims exactly `resources` (what its next verification says).
    package func grant(_ resources: Set<String>, message: String? = nil) {
        state.withLock {
            $0.grants = resources
            $0.message = message
        }
    }

    /// The next answer to `question` (or every one, until ``heal(_:)``) fails with `failure`.
    package func fail(_ question: Question, with failure: ProviderFailure, untilHealed: Bool = false) {
        state.withLock { $0.faults[question] = (failure, untilHealed) }
    }

    /// Answers to `question` succeed again.
    package func heal(_ question: Question) {
        _ = state.withLock { $0.faults.removeValue(forKey: question) }
    }

    /// The resources credentials were asked for, in order.
    package var credentialsAsked: [String] { state.withLock { $0.asked } }

    /// Every credential handed out, in order (secrets: for hygiene checks).
    package var minted: [String] { state.withLock { $0.minted } }

    /// What the user may access now, unless a fault says otherwise.
    package func verify(_ session: ProviderSession) async -> Result<ProviderView, ProviderFailure> {
        state.withLock { state in
            if let failure = Self.takeFault(.verify, &state) { return .failure(failure) }
            return .success(ProviderView(resources: state.grants, message: state.message))
        }
    }

    /// Fresh credentials (`ID-…`) for a resource it claims; `ProviderFailure.unavailable` for any other.
    package func credentials(for resource: String, _ session: ProviderSession) async -> Result<ProviderCredentials, ProviderFailure> {
        state.withLock { state in
            state.asked.append(resource)
            if let failure = Self.takeFault(.credentials, &state) { return .failure(failure) }
            guard state.grants.contains(resource) else { return .failure(.unavailable) }
            // Opaque like a real credential (and as secret-looking to the redactor), the same every run.
            let digest = SHA256.hash("\(id)|\(resource)|\(session.deviceID)|\(state.minted.count)")
            let token = "\(id)-" + Base64URL.encode(Array(digest.prefix(18)))
            state.minted.append(token)
            return .success(ProviderCredentials(token: token))
        }
    }

    private static func takeFault(_ question: Question, _ state: inout State) -> ProviderFailure? {
        guard let fault = state.faults[question] else { return nil }
        if !fault.untilHealed { state.faults[question] = nil }
        return fault.failure
    }
}
