import EntitlementEngine
import EntitlementSimulator

/// One step of a random exploration: a call, something the user, the backend, the platform, the
/// storage or the clock does. Steps print as lines, so a failing run reads as a script.
package enum ExplorerStep: Sendable, Hashable, CustomStringConvertible {
    /// Call the engine.
    case call(EntitlementCall)
    /// The user signs in at the last `navigateToUrl` (with the right password or not); the
    /// redirect is handed to the engine, or kept for a later ``deliverKept``.
    case logIn(rightPassword: Bool, deliver: Bool)
    /// The user cancels at the MVPD's page.
    case cancelAtProvider
    /// The web view follows the last `navigateToUrl` (a logout chain) back to the app, or not.
    case followLogout(deliver: Bool)
    /// A redirect kept earlier reaches the engine (late, replayed, on another flow).
    case deliverKept
    /// The second-screen user enters the last registration code.
    case activateSecondScreen
    /// The engine's clock moves on.
    case advanceClock(Duration)
    /// The backend fails the next request of `operation` (or garbles it).
    case fail(BackendOperation, garbage: Bool)
    /// The backend holds answers to `operation` until released.
    case hold(BackendOperation)
    /// Held answers to `operation` arrive.
    case release(BackendOperation)
    /// Token storage starts or stops failing saves.
    case storageFails(Bool)
    /// What the platform's picker answers next (devices with a platform account).
    case platformAnswers(SimulatedPlatform.Choice)
    /// The direct subscription's subscriber lapses (`true`) or renews.
    case subscriptionLapses(Bool)
    /// The subscription service forgets every user token it issued.
    case subscriptionForgetsTokens
    /// A provider's service (`magazine`, the Security API, or `live`, the programmer's) misbehaves once.
    case serviceFails(String, ProgrammerFault)
    /// The user enters the PIN for the step-up asked last (right or wrong).
    case userConfirmsStepUp(rightPIN: Bool)
    /// Requests to provider `id` wait (`true`) or are let through (`false`).
    case providerHolds(String, Bool)
    /// The simulated provider `store` fails its next answer to `question`.
    case storeFails(SimulatedEntitlementProvider.Question, ProviderFailure)
    /// The simulated provider `store` claims `resources` from its next verification on.
    case storeGrants([String])
    /// The step happens on another node serving the same device session (same storage, same
    /// backend): what makes `storageChanged` and lost compare-and-sets happen.
    indirect case onOtherNode(ExplorerStep)

    /// The step as a script line.
    package var description: String {
        switch self {
        case .call(let call): "> \(call.redactedDescription)"
        case .logIn(let right, let deliver): "! user logs in (\(right ? "right" : "wrong") password)\(deliver ? "" : ", redirect kept")"
        case .cancelAtProvider: "! user cancels at the provider"
        case .followLogout(let deliver): "! web view follows the logout\(deliver ? "" : ", redirect kept")"
        case .deliverKept: "! a kept redirect arrives"
        case .activateSecondScreen: "! second-screen user enters the code"
        case .advanceClock(let duration): "! clock advances \(duration)"
        case .fail(let operation, let garbage): "! backend \(garbage ? "garbles" : "fails") \(operation.rawValue)"
        case .hold(let operation): "! backend holds \(operation.rawValue)"
        case .release(let operation): "! backend releases \(operation.rawValue)"
        case .storageFails(let failing): failing ? "! storage starts failing saves" : "! storage heals"
        case .platformAnswers(let choice): "! platform picker will answer \(choice)"
        case .subscriptionLapses(let lapsed): "! subscriber ann \(lapsed ? "lapses" : "renews")"
        case .subscriptionForgetsTokens: "! server magazine invalidates tokens"
        case .serviceFails(let id, let fault): "! server \(id) answers \(fault)"
        case .userConfirmsStepUp(let right): "! user confirms the step-up with the \(right ? "right" : "wrong") PIN"
        case .providerHolds(let id, let holds): "! provider \(id) \(holds ? "holds" : "releases") its answers"
        case .storeFails(let question, let failure): "! provider store fails \(question.rawValue) with \(failure.code)"
        case .storeGrants(let resources): "! provider store grants \(resources.isEmpty ? "nothing" : resources.joined(separator: ", "))"
        case .onOtherNode(let step): "[other node] \(step)"
        }
    }
}
