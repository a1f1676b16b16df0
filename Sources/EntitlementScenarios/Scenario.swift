import EntitlementEngine
import EntitlementSimulator

/// A parsed scenario script: the world it runs in, its settings and directives, and its steps.
public struct Scenario: Sendable {
    /// The file the script came from (for reports).
    package var file: String
    /// The world: a built-in one plus the script's declarations.
    package var world: SimulatedWorld
    /// Engine settings changed with `set`.
    package var settings: EngineSettings
    /// The device id (`set device`).
    package var deviceID: String
    /// Whether the device has a platform TV-provider account (`set platform-sso`; cookbook D).
    package var platformSSO = false
    /// Callbacks the script does not check (`ignore sendTrackingData`).
    package var ignored: Set<String>
    /// Whether calls may still be unanswered when the script ends (`allow pending calls`).
    package var allowsPendingCalls: Bool
    /// Whether the engine's backend requests are part of the exhaustive check, in order between the
    /// callbacks: true as soon as the script expects one with a `⇢` line.
    package var checksBackendRequests = false
    /// Whether requests to providers of the chain are expected too (a `⇢ provider` line makes them so).
    package var checksProviderRequests = false
    /// The steps, in order.
    package var steps: [Step]
    /// The engines besides `main` (`engine NAME …`), in declaration order. They share the world's
    /// simulator and clock; each has its own device id and storage unless it names another's.
    package var engines: [EngineDeclaration] = []

    /// The engine a step without `@NAME` addresses: the one `set device` and `set platform-sso` describe.
    package static let mainEngine = "main"

    /// Every engine's name, `main` first.
    package var engineNames: [String] { [Self.mainEngine] + engines.map(\.name) }

    /// The declaration of the engine called `name` (none for `main`, which the settings describe).
    package func engine(named name: String) -> EngineDeclaration? { engines.first { $0.name == name } }

    /// The scenario's name: the file name without `.scenario`.
    public var name: String {
        let last = file.split(separator: "/").last.map(String.init) ?? file
        return last.hasSuffix(".scenario") ? String(last.dropLast(".scenario".count)) : last
    }
}

/// `engine NAME [device ID] [storage ENGINE [synced]] [platform-sso]`: one more engine in the script's world
/// — another app, another device, or the same device's storage seen by a second instance.
package struct EngineDeclaration: Sendable, Hashable {
    /// Its name; steps address it with `@NAME`.
    package var name: String
    /// Its device id; nil: the device of the engine whose storage it shares, else its name.
    package var deviceID: String?
    /// The engine whose token storage it shares (`main` or one declared before it); nil: its own.
    package var storage: String?
    /// Whether its device has a platform TV-provider account.
    package var platformSSO = false
    /// Whether the shared store does not tell devices apart (`synced`: a keychain synced across
    /// devices, a copied folder), so this engine reads the tokens of the store owner's device.
    package var synced = false
}

/// One line of a script that does something.
package struct Step: Sendable {
    /// Where it is, 1-based.
    package var line: Int
    /// The engine it addresses (`@NAME` after the sigil); nil when none is named: `main`.
    package var engine: String? = nil
    /// The line as written, for reports (a `signIn` line with the values the user typed shown as `…`).
    package var text: String
    /// What it does.
    package var kind: Kind

    /// The three kinds of step.
    package enum Kind: Sendable {
        /// `>` an API call.
        case call(CallStep)
        /// `<` the next callback must match.
        case expect(Expectation)
        /// `< nothing`: no callback may be waiting.
        case expectNothing
        /// `< any order {` … `< }`: the next callbacks match these expectations in some order.
        case expectInAnyOrder([Expectation])
        /// `< one of { … }`: the next callback matches one of these (where the sources allow either).
        case expectOneOf([Expectation])
        /// `!` the world acts.
        case act(WorldAction)
    }
}

/// A value written in a script: literal text, nil, a list, or a captured value.
package indirect enum ValueExpression: Sendable, Hashable {
    /// Literal text.
    case text(String)
    /// `nil`.
    case none
    /// `[a, b]`.
    case list([ValueExpression])
    /// `$name`: a value captured earlier.
    case reference(String)
}

/// `>` lines: every API call with its arguments.
package enum CallStep: Sendable, Hashable {
    /// `> setRequestor R [SP…]`.
    case setRequestor(ValueExpression, serviceProviders: [ValueExpression])
    /// `> setOptions k=v …`.
    case setOptions([String: ValueExpression])
    /// `> checkAuthentication`.
    case checkAuthentication
    /// `> getAuthentication [force] [data k=v …]`.
    case getAuthentication(force: Bool, data: [String: ValueExpression])
    /// `> setSelectedProvider ID|nil`.
    case setSelectedProvider(ValueExpression)
    /// `> handleExternalURL URL`.
    case handleExternalURL(ValueExpression)
    /// `> getSelectedProvider`.
    case getSelectedProvider
    /// `> checkAuthorization R [data k=v …]`.
    case checkAuthorization(ValueExpression, data: [String: ValueExpression])
    /// `> getAuthorization R [data k=v …]`.
    case getAuthorization(ValueExpression, data: [String: ValueExpression])
    /// `> checkPreauthorizedResources [R…] [nocache]`.
    case checkPreauthorizedResources(ValueExpression, cache: Bool)
    /// `> getMetadata KEY`.
    case getMetadata(MetadataKey)
    /// `> logout`.
    case logout
    /// `> signIn P k=v …`: sign in to provider P with these credentials.
    case signIn(ValueExpression, credentials: [String: ValueExpression])
    /// `> signOut P`.
    case signOut(ValueExpression)
    /// `> completeStepUp R succeeded|failed`.
    case completeStepUp(ValueExpression, succeeded: Bool)
}

/// How one argument of an expected callback must look.
package indirect enum Pattern: Sendable, Hashable {
    /// `*`: anything.
    case any
    /// A literal value (text, nil, or a list of patterns).
    case equals(ValueExpression)
    /// `[p, p]`: a list whose elements match in order.
    case list([Pattern])
    /// `~"regex"`: text matching the regular expression.
    case matches(String)
    /// `$name=PATTERN`: match, then remember the value as `$name`.
    case capture(String, Pattern)
    /// `!PATTERN`: anything the pattern does not match (for example `!$first`: a new value).
    case not(Pattern)
}

/// `<` lines: the next callback's name and arguments; `⇢` lines: the next backend request's.
package struct Expectation: Sendable, Hashable {
    /// The callback name (`setToken`), `optionsRefused` for a refused `setOptions`, or `⇢` and an
    /// operation (`⇢ authorize`) for a backend request.
    package var callback: String
    /// One pattern per argument.
    package var arguments: [Pattern]
    /// A trailing `...`: any further arguments are accepted.
    package var acceptsMore: Bool
}

/// `!` lines: what the user, the MVPD, the clock, the backend or an attacker does.
package enum WorldAction: Sendable, Hashable {
    /// `! user logs in as U with P [holding $x]`: at the last `navigateToUrl`; the app passes the
    /// final URL to `handleExternalURL` unless it is held in `$x`.
    case logIn(user: ValueExpression, password: ValueExpression, holding: String?)
    /// `! user cancels at the provider [holding $x]`: "Cancel" on the MVPD page (an `error=` redirect).
    case cancelAtProvider(holding: String?)
    /// `! user closes the login page`: the app calls `setSelectedProvider(nil)`.
    case closeLoginPage
    /// `! user confirms the step-up with PIN P`: on the programmer's service, the user approves the
    /// transaction it last asked about (a wrong PIN approves nothing).
    case confirmStepUp(pin: String)
    /// `! web view follows the logout [holding $x]`.
    case followLogout(holding: String?)
    /// `! clock advances D`.
    case advanceClock(Duration)
    /// `! backend fails OP with FAULT [until healed]`.
    case fail(BackendOperation, SimulatedFault, untilHealed: Bool)
    /// `! backend heals OP`.
    case heal(BackendOperation)
    /// `! backend holds OP`: its answers wait (arrive late).
    case hold(BackendOperation)
    /// `! backend releases OP`.
    case release(BackendOperation)
    /// `! attacker delivers URL [with p v] [without p] [adding p v] [at BASE]`.
    case attack(ValueExpression, [URLEdit])
    /// `! platform user will …`: what the user will do in the next platform picker.
    case platform(SimulatedPlatform.Choice)
    /// `! platform user answers …`: the user answers the picker held open (`will keep the picker open`).
    case platformAnswer(SimulatedPlatform.Choice)
    /// `! platform user signs in as U` (in the device settings, now).
    case platformSignIn(String)
    /// `! platform user signs out` (in the device settings, now).
    case platformSignOut
    /// `! backend resets temppass`: this device may use its TempPasses again.
    case resetTempPass
    /// `! second-screen user enters CODE as U with P`: on another device, U signs in with the code.
    case activate(code: ValueExpression, user: ValueExpression, password: ValueExpression)
    /// `! storage fails saves [until healed]`: the engine's next save (or every one) fails, as on a full disk.
    case failSaves(untilHealed: Bool)
    /// `! storage is unavailable for N saves`: the engine's next N saves fail as a store that is away for
    /// a moment does (restarting, failing over): the engine tries again, and succeeds once they have.
    case storageUnavailable(saves: Int)
    /// `! storage is unavailable for N reads`: the engine's next N reads of the store (its version or its
    /// tokens) fail as a store that is away for a moment does: the engine reads again, and goes on once they have.
    case storageUnreadable(reads: Int)
    /// `! storage heals`: saves succeed again.
    case healStorage
    /// `! storage loses the last write`: the store forgets the last write it acknowledged (a Redis
    /// restarted without persistence, a failover to a replica behind): the tokens are as before it.
    case loseLastWrite
    /// `! engine restarts`: the app's process dies and starts again — a new engine on the same
    /// device and storage; calls the old one had not answered are lost with it.
    case restartEngine
    /// `! host gives up the provider choice`: whoever runs the engine (a session host's time limit, a
    /// session closing) stops waiting for the open picker (`AccessEnabler.abandonProviderChoice(_:)`).
    case abandonProviderChoice
    /// `! provider P grants R1, R2 [message "…"]` (or `grants nothing`): what P's next verification says.
    case providerGrants(String, [String], message: String?)
    /// `! provider P fails verify|credentials with REASON [until healed]`.
    case providerFails(String, SimulatedEntitlementProvider.Question, ProviderFailure, untilHealed: Bool)
    /// `! provider P heals verify|credentials`.
    case providerHeals(String, SimulatedEntitlementProvider.Question)
    /// `! provider P holds its answers`: requests to P (any provider of the chain) wait until released.
    case providerHolds(String)
    /// `! provider P releases its answers`: they arrive, late, at the next settle.
    case providerReleases(String)
    /// `! provider P releases its next answer`: the oldest held request goes through; P goes on holding.
    case providerReleasesNext(String)
    /// `! server ID answers status N|garbage|array|nothing [until healed]`: the programmer's service misbehaves.
    case serverAnswers(String, ProgrammerFault, untilHealed: Bool)
    /// `! server ID heals`.
    case serverHeals(String)
    /// `! server ID invalidates tokens`: the subscription service forgets every user token it issued.
    case serverInvalidatesTokens(String)
    /// `! subscriber NAME lapses|renews`.
    case subscription(String, lapsed: Bool)
    /// `! app on CALLBACK will call CALL`: when CALLBACK next arrives, the app makes CALL from
    /// inside it (the engine queues it behind the step that emitted the callback).
    case callFromCallback(callback: String, call: CallStep)
}

/// One change an attacker makes to a URL before delivering it.
package enum URLEdit: Sendable, Hashable {
    /// Replace (or add) parameter `name`.
    case set(String, ValueExpression)
    /// Remove parameter `name`.
    case remove(String)
    /// Append `name=value` again (a duplicate).
    case append(String, ValueExpression)
    /// Replace everything before `?`.
    case base(ValueExpression)
}
