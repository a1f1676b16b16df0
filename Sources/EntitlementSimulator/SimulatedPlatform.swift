import EntitlementEngine
import Synchronization

/// A device's system-wide TV-provider account, as the engine's `PlatformSSO` port sees it: the
/// picker is answered from a script (what the user will do), and a sign-in yields an assertion
/// the simulator's backend verifies. The account stays signed in until ``signOut()``, and while it
/// is, ``signedInAssertion(requestorID:mvpdIDs:request:)`` answers without UI. Its assertions answer the
/// partner request the engine hands over, as Apple's framework answers Adobe's SAML request.
public final class SimulatedPlatform: PlatformSSO {
    /// What the user does in the picker.
    public enum Choice: Sendable, Hashable {
        /// Signs in as this user (with the user's MVPD).
        case signIn(username: String)
        /// Picks a provider the platform cannot sign in with for this app (N004).
        case choose(mvpdID: String)
        /// "Other TV Providers".
        case otherProviders
        /// Cancel.
        case cancel
        /// Hands this assertion over as the platform's (forged or expired ones, for tests).
        case present(PlatformAssertion)
        /// Leaves the picker open until `answerOpenPicker(_:)` answers it or the engine stops
        /// waiting for it (its task is cancelled). The engine counts an open picker as work in
        /// flight: `whenIdle()` waits for it; ``SimulatedSession/settle()`` does not (the script
        /// acts while it is open).
        case wait
    }

    private struct State {
        var script: [Choice] = []
        var signedIn: String?
        var presented: [TvProviderDialog] = []
        var requests: [V2PartnerRequest] = []
        /// The picker that took `.wait` and has not been answered or closed yet, by the number its
        /// `pickProvider` drew: a late cancellation of an earlier picker never touches a later one's.
        var held: Int?
        /// The held picker's continuation, once it waits.
        var openPicker: CheckedContinuation<Choice?, Never>?
        /// An answer that came before the held picker (by its number) started waiting.
        var earlyAnswer: (picker: Int, choice: Choice)?
        /// How many pickers were asked (each takes the next number).
        var pickers = 0
        /// The pickers the engine showed (``engineShowed(_:)``) whose task has not asked yet, in order, each
        /// with the choice scripted for it when it was shown.
        var shown: [(dialogID: String, choice: Choice?)] = []
        var holding: Bool { held != nil }
    }

    private let simulator: Simulator
    private let deviceID: String
    private let state = Mutex(State())

    /// A platform on `deviceID` whose assertions `simulator` verifies.
    public init(simulator: Simulator, deviceID: String) {
        self.simulator = simulator
        self.deviceID = deviceID
    }

    /// Queues what the user will do in the next pickers, in order; an unscripted picker is cancelled.
    public func script(_ choices: Choice...) { state.withLock { $0.script += choices } }

    /// Forgets the choices scripted and not used yet.
    package func clearScript() { state.withLock { $0.script.removeAll() } }

    /// The user signed in to the platform account, if any.
    package var signedInUser: String? { state.withLock { $0.signedIn } }

    /// The pickers presented so far.
    package var presentedDialogs: [TvProviderDialog] { state.withLock { $0.presented } }

    /// Signs the platform account in as `username` (the user did it in the device settings).
    public func signIn(_ username: String) { state.withLock { $0.signedIn = username } }

    /// Signs the platform account out (the user did it in the device settings).
    public func signOut() { state.withLock { $0.signedIn = nil } }

    /// The partner requests the engine handed over, in order.
    package var requests: [V2PartnerRequest] { state.withLock { $0.requests } }

    /// The signed-in account's assertion answering `request`, when its MVPD is one of `mvpdIDs`.
    public func signedInAssertion(requestorID: String, mvpdIDs: [String], request: V2PartnerRequest) async -> PlatformAssertion? {
        state.withLock { $0.requests.append(request) }
        guard let username = signedInUser,
            let assertion = await simulator.platformAssertion(username: username, deviceID: deviceID, answering: request),
            mvpdIDs.contains(assertion.mvpdID)
        else { return nil }
        return assertion
    }

    /// Whether a picker is held open (``Choice/wait``), or the next one will be: the engine's
    /// platform work is then the user's to end, not something to wait for. The latest picker the engine
    /// showed decides while its task has not asked yet.
    package var holdsPicker: Bool {
        state.withLock { state in
            if let latest = state.shown.last { return latest.choice == .wait }
            return state.holding || state.script.first == .wait
        }
    }

    /// The engine showed `dialog` (its `presentTvProviderDialog`, seen as it is emitted): the choice
    /// scripted next is this picker's, whenever its task asks — also when the engine dismisses it first
    /// (the user's line was for the picker shown), never the next picker's.
    package func engineShowed(_ dialog: TvProviderDialog) {
        state.withLock { state in
            state.shown.append((dialog.id, state.script.isEmpty ? nil : state.script.removeFirst()))
        }
    }

    /// Answers the picker held open with `choice` (the user acts while it is open); false when no
    /// picker is held.
    @discardableResult
    package func answerOpenPicker(_ choice: Choice) -> Bool {
        state.withLock { state in
            guard choice != .wait else { return false }
            if let latest = state.shown.indices.last, state.shown[latest].choice == .wait {
                // The engine showed the picker but its task has not reached the platform yet (a busy
                // machine): the user's answer is the one that picker gets.
                state.shown[latest].choice = choice
                return true
            }
            if !state.holding, state.script.first == .wait {
                // The same, on a platform no session tells of the pickers the engine shows.
                state.script[0] = choice
                return true
            }
            guard let held = state.held else { return false }
            state.held = nil  // answered: from now on the engine's platform work is worth waiting for
            if let open = state.openPicker {
                state.openPicker = nil
                open.resume(returning: choice)
            } else {
                state.earlyAnswer = (held, choice)
            }
            return true
        }
    }

    /// Suspends until held picker `number` is answered (the choice) or the calling task is cancelled (nil).
    private func waitForAnswer(_ number: Int) async -> Choice? {
        let answer: Choice? = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Choice?, Never>) in
                state.withLock { state in
                    if state.held == number {
                        state.openPicker = continuation
                    } else {
                        // Answered before it waited, or dismissed (or followed by another held picker).
                        let early = state.earlyAnswer.flatMap { $0.picker == number ? $0.choice : nil }
                        if early != nil { state.earlyAnswer = nil }
                        continuation.resume(returning: early)
                    }
                }
            }
        } onCancel: {
            // Dismissed by the engine: held no longer, from the moment it is cancelled (waiting for the task to
            // resume left a settle, on a busy machine, skipping the engine's platform work that followed).
            state.withLock { state in
                guard state.held == number else { return }
                state.held = nil
                state.openPicker?.resume(returning: nil)
                state.openPicker = nil
            }
        }
        return answer
    }

    /// Answers the picker with the next scripted choice; a sign-in's assertion answers `request`.
    public func pickProvider(_ dialog: TvProviderDialog, requestorID: String, request: V2PartnerRequest) async -> PlatformPickerAnswer {
        let dismissedAlready = Task.isCancelled
        var number = 0
        var choice: Choice? = state.withLock { state in
            state.presented.append(dialog)
            state.requests.append(request)
            state.pickers += 1
            number = state.pickers
            let bound = state.shown.firstIndex { $0.dialogID == dialog.id }.map { state.shown.remove(at: $0).choice }
            // A picker the engine dismissed before its task ran never reached the user. Unless the engine was
            // seen showing it (its choice then was its own), the choice scripted for the next picker stays for
            // that one (a busy machine once let such a late task take it).
            guard !dismissedAlready else { return nil }
            let next = bound ?? (state.script.isEmpty ? nil : state.script.removeFirst())
            // The engine shows one picker at a time: an earlier held picker still open was dismissed, and its
            // cancellation may not have come yet.
            state.openPicker?.resume(returning: nil)
            state.openPicker = nil
            state.held = next == .wait ? number : nil
            state.earlyAnswer = nil
            return next
        }
        if choice == .wait { choice = await waitForAnswer(number) }
        switch choice {
        case .wait?, .none, .cancel?: return .cancelled
        case .otherProviders?: return .otherProviders
        case .present(let assertion)?: return .signedIn(assertion)
        case .choose(let mvpdID)?: return .unsupportedProvider(mvpdID)
        case .signIn(let username)?:
            guard let assertion = await simulator.platformAssertion(username: username, deviceID: deviceID, answering: request) else {
                return .cancelled
            }
            guard dialog.mvpds.contains(where: { $0.id == assertion.mvpdID }) else {
                return .unsupportedProvider(assertion.mvpdID)
            }
            state.withLock { $0.signedIn = username }
            return .signedIn(assertion)
        }
    }
}
