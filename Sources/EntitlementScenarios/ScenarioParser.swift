import EntitlementEngine
import EntitlementSimulator

/// Parses scenario scripts. Strict: an unknown word, a missing argument, a wrong number of
/// callback arguments, a declaration after the first step — each is refused with
/// `file:line:column`, and every such line of a script is reported, not only the first.
public enum ScenarioParser {
    /// How many steps a script may have once its `repeat` blocks are unrolled.
    public static let stepLimit = 100_000

    /// Parses `text`, naming `file` in errors and reports.
    public static func parse(_ text: String, file: String) throws(ScenarioParseError) -> Scenario {
        var scenario = Scenario(
            file: file, world: .default, settings: EngineSettings(), deviceID: "device-1", ignored: [],
            allowsPendingCalls: false, steps: [])
        var sawHeader = false
        var problems: [ScenarioParseError] = []
        var omitted = 0
        var blocks = Blocks()
        func report(_ line: Int, _ column: Int, _ message: String) {
            if problems.count < ScenarioParseError.reportLimit {
                problems.append(ScenarioParseError(file: file, line: line, column: column, message: message))
            } else {
                omitted += 1
            }
        }
        for (offset, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = offset + 1
            let content = rawLine.hasSuffix("\r") ? rawLine.dropLast() : rawLine
            let trimmed = content.drop { $0 == " " || $0 == "\t" }
            guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { continue }
            let indent = content.count - trimmed.count
            do throws(ScenarioParseError.Reason) {
                if let sigil = trimmed.first, ">!<⇢".contains(sigil) {
                    var cursor = TokenCursor(
                        try ScenarioLexer.tokens(trimmed.dropFirst(), startColumn: indent + 2),
                        endColumn: content.count + 1)
                    let engine = try addressedEngine(&cursor, scenario)
                    var step: Step? = Step(line: line, text: String(trimmed), kind: .expectNothing)
                    switch sigil {
                    case ">":
                        let call = try call(&cursor)
                        step?.kind = .call(call)
                        // What the user typed is a secret: reports show which fields, never their values.
                        if case .signIn(let provider, let credentials) = call {
                            step?.text = Self.concealedSignIn(provider, credentials: credentials, engine: engine)
                        }
                    case "<": step = try expectationLine(&cursor, line: line, text: String(trimmed), engine: engine, &blocks)
                    case "⇢":
                        scenario.checksBackendRequests = true
                        step?.kind = .expect(try request(&cursor))
                    default:
                        let platform = engine.flatMap(scenario.engine(named:))?.platformSSO ?? scenario.platformSSO
                        step?.kind = .act(try action(&cursor, platform: platform))
                    }
                    try cursor.end()
                    if case .expectInAnyOrder? = step?.kind {} else { step?.engine = engine }
                    if let step { try blocks.add(step, to: &scenario.steps, column: indent + 1) }
                } else {
                    var cursor = TokenCursor(
                        try ScenarioLexer.tokens(trimmed, startColumn: indent + 1), endColumn: content.count + 1)
                    if try blocks.repeatLine(&cursor, line: line, steps: &scenario.steps) { continue }
                    guard scenario.steps.isEmpty, blocks.isEmpty else {
                        throw cursor.fail("declarations and settings must come before the first step")
                    }
                    try header(&cursor, &scenario, first: !sawHeader)
                    sawHeader = true
                    try cursor.end()
                }
            } catch {
                // The line is skipped and parsing goes on, so the script is reported whole.
                switch error {
                case .at(let column, let message): report(line, column, message)
                }
            }
        }
        for (line, column, message) in blocks.unclosed { report(line, column, message) }
        let ordered = problems.sorted { ($0.line, $0.column) < ($1.line, $1.column) }
        if var first = ordered.first {
            first.following = Array(ordered.dropFirst())
            first.omitted = omitted
            throw first
        }
        return scenario
    }

    /// A `> signIn` line as reports show it: the provider and the names of the fields, each value `…`.
    static func concealedSignIn(_ provider: ValueExpression, credentials: [String: ValueExpression], engine: String?) -> String {
        let shownProvider = switch provider {
        case .text(let id): id
        case .reference(let name): "$" + name
        case .none, .list: "…"
        }
        let fields = credentials.keys.sorted().map { "\($0)=…" }
        return ([">" + (engine.map { " @" + $0 } ?? ""), "signIn", shownProvider] + fields).joined(separator: " ")
    }

    /// `@NAME` right after the sigil: the engine a step addresses (nil: none named, which is `main`).
    private static func addressedEngine(_ cursor: inout TokenCursor, _ scenario: Scenario) throws(ScenarioParseError.Reason)
        -> String?
    {
        guard case .word(let word)? = cursor.peek, word.hasPrefix("@") else { return nil }
        let column = cursor.column
        _ = cursor.next()
        let name = String(word.dropFirst())
        guard scenario.engineNames.contains(name) else {
            throw .at(column, "unknown engine '\(name)' (declare it with `engine \(name)`; known: \(scenario.engineNames.joined(separator: ", ")))")
        }
        return name  // `@main` stays explicit, so a block can tell it from the engine its first line named
    }

    /// A `<` line: an expectation, `nothing`, or the start or end of an any-order block (whose step
    /// is the whole block, at the line that opened it).
    private static func expectationLine(
        _ cursor: inout TokenCursor, line: Int, text: String, engine: String?, _ blocks: inout Blocks
    ) throws(ScenarioParseError.Reason) -> Step? {
        let column = cursor.column
        if cursor.accept("any") {
            try cursor.expect("order {")
            try blocks.openGroup(line: line, column: column, engine: engine)
            return nil
        }
        if cursor.accept("}") {
            guard let group = try blocks.closeGroup(column: column) else { return nil }
            let text = "< " + (group.engine.map { "@\($0) " } ?? "") + "any order { … }"
            return Step(line: group.line, engine: group.engine, text: text, kind: .expectInAnyOrder(group.expectations))
        }
        return Step(line: line, text: text, kind: try expectation(&cursor))
    }

    /// A `⇢` line: the next backend request, by operation and arguments.
    private static func request(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> Expectation {
        let column = cursor.column
        let name = try cursor.word("a backend operation")
        guard let operation = BackendOperation(rawValue: name) else {
            let known = BackendOperation.allCases.map(\.rawValue).joined(separator: ", ")
            throw .at(column, "unknown backend operation '\(name)' (\(known))")
        }
        let arguments = ScenarioText.requestArguments(operation)
        var patterns: [Pattern] = []
        while !cursor.atEnd { patterns.append(try cursor.pattern()) }
        guard patterns.count == arguments.count else {
            let signature = arguments.isEmpty ? "no arguments" : arguments.joined(separator: " ")
            throw .at(column, "⇢ \(name) takes \(arguments.count) argument\(arguments.count == 1 ? "" : "s") (\(signature)), got \(patterns.count)")
        }
        return Expectation(callback: ScenarioText.requestName(operation), arguments: patterns, acceptsMore: false)
    }

    // MARK: - Declarations, settings and directives

    private static func header(_ cursor: inout TokenCursor, _ scenario: inout Scenario, first: Bool)
        throws(ScenarioParseError.Reason)
    {
        let start = cursor.column
        switch try cursor.word("a declaration (world, requestor, mvpd, user, provider, subscriber, chain, engine), 'set', 'ignore' or 'allow'") {
        case "world":
            guard first else { throw .at(start, "'world' must be the first declaration") }
            switch try cursor.word("a world name") {
            case "default": scenario.world = .default
            case "empty": scenario.world = SimulatedWorld(requestors: [], providers: [], users: [])
            case let other: throw .at(start + 6, "unknown world '\(other)' (known: default, empty)")
            }
        case "requestor":
            let id = try cursor.word("a requestor id")
            try cursor.expect("mvpds")
            let mvpds = try cursor.wordList("an MVPD id")
            var resources: [String] = []
            if cursor.accept("resources") { resources = try cursor.wordList("a resource id") }
            scenario.world.requestors.removeAll { $0.id == id }
            scenario.world.requestors.append(.init(id: id, mvpdIDs: mvpds, resources: resources))
        case "mvpd":
            let provider = try mvpd(&cursor)
            scenario.world.providers.removeAll { $0.id == provider.id }
            scenario.world.providers.append(provider)
        case "provider":
            let provider = try chainProvider(&cursor)
            scenario.world.chainProviders.removeAll { $0.id == provider.id }
            scenario.world.chainProviders.append(provider)
        case "subscriber":
            let name = try cursor.word("a subscriber's user name")
            try cursor.expect("password")
            let password = try text(&cursor, "a password")
            try cursor.expect("of")
            let providerColumn = cursor.column
            let provider = try cursor.word("a subscription provider's id")
            guard scenario.world.chainProviders.contains(where: { $0.id == provider && $0.kind == .subscription }) else {
                throw .at(providerColumn, "unknown subscription provider '\(provider)' (declare `provider \(provider) subscription` first)")
            }
            var subscriber = SimulatedWorld.Subscriber(username: name, password: password, providerID: provider, issues: [])
            while !cursor.atEnd {
                let optionColumn = cursor.column
                switch try cursor.word("a subscriber option") {
                case "issues": subscriber.issues = Set(try cursor.wordList("an issue id"))
                case "lapsed": subscriber.lapsed = true
                case "message": subscriber.message = try text(&cursor, "a message")
                case let other: throw .at(optionColumn, "unknown subscriber option '\(other)' (issues, lapsed, message)")
                }
            }
            scenario.world.subscribers.removeAll { $0.username == name && $0.providerID == provider }
            scenario.world.subscribers.append(subscriber)
        case "chain":
            let column = cursor.column
            let order = try cursor.wordList("a provider id or tv-provider")
            for id in order where id != ProviderLink.tvProviderID && !scenario.world.chainProviders.contains(where: { $0.id == id }) {
                throw .at(column, "unknown provider '\(id)' (declare it with `provider \(id)` first, or write tv-provider)")
            }
            guard Set(order).count == order.count else { throw .at(column, "a provider is in the chain twice") }
            scenario.world.chainOrder = order
        case "user":
            let user = try user(&cursor)
            scenario.world.users.removeAll { $0.username == user.username }
            scenario.world.users.append(user)
        case "set":
            let settingColumn = cursor.column
            switch try cursor.word("a setting (redirect-timeout, queue-limit, redirect-url, device, platform-sso, second-screen, session-ttl)") {
            case "redirect-timeout":
                let settings = scenario.settings
                scenario.settings = EngineSettings(
                    redirectURL: settings.redirectURL, redirectTimeout: try cursor.duration(), queueLimit: settings.queueLimit)
            case "queue-limit": scenario.settings.queueLimit = try cursor.number("a queue limit")
            case "redirect-url": scenario.settings.redirectURL = try text(&cursor, "a redirect URL")
            case "device": scenario.deviceID = try text(&cursor, "a device id")
            case "platform-sso": scenario.platformSSO = true
            case "session-ttl": scenario.world.sessionTTL = try cursor.duration()
            case "step-up":
                var stepUp = StepUpSettings(resources: Set(try cursor.wordList("a resource id")))
                if cursor.accept("timeout") { stepUp.timeout = try cursor.duration() }
                scenario.settings.stepUp = stepUp
            case "second-screen":
                var secondScreen = SecondScreen()
                while !cursor.atEnd {
                    let optionColumn = cursor.column
                    switch try cursor.word("poll or code-lifetime") {
                    case "poll": secondScreen = SecondScreen(pollInterval: try cursor.duration(), codeLifetime: secondScreen.codeLifetime)
                    case "code-lifetime":
                        secondScreen = SecondScreen(pollInterval: secondScreen.pollInterval, codeLifetime: try cursor.duration())
                    case let other: throw .at(optionColumn, "unknown second-screen option '\(other)' (poll, code-lifetime)")
                    }
                }
                scenario.settings.secondScreen = secondScreen
            case let other: throw .at(settingColumn, "unknown setting '\(other)'")
            }
        case "engine":
            let nameColumn = cursor.column
            let name = try cursor.word("an engine name")
            guard name != Scenario.mainEngine, !scenario.engines.contains(where: { $0.name == name }),
                name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" })
            else { throw .at(nameColumn, "'\(name)' cannot name another engine (a new name of letters, digits, - and _; not main)") }
            var declaration = EngineDeclaration(name: name)
            while !cursor.atEnd {
                let optionColumn = cursor.column
                switch try cursor.word("device, storage, synced or platform-sso") {
                case "device": declaration.deviceID = try text(&cursor, "a device id")
                case "platform-sso": declaration.platformSSO = true
                case "synced":
                    guard declaration.storage != nil else { throw .at(optionColumn, "'synced' goes after 'storage ENGINE'") }
                    declaration.synced = true
                case "storage":
                    let ownerColumn = cursor.column
                    let owner = try cursor.word("the engine whose storage it shares")
                    guard scenario.engineNames.contains(owner) else {
                        throw .at(ownerColumn, "unknown engine '\(owner)' (main, or one declared before)")
                    }
                    declaration.storage = owner
                case let other: throw .at(optionColumn, "unknown engine option '\(other)' (device, storage, synced, platform-sso)")
                }
            }
            scenario.engines.append(declaration)
        case "ignore":
            let nameColumn = cursor.column
            let name = try cursor.word("a callback name")
            guard ScenarioText.arguments[name] != nil else { throw .at(nameColumn, "unknown callback '\(name)'") }
            scenario.ignored.insert(name)
        case "allow":
            try cursor.expect("pending calls")
            scenario.allowsPendingCalls = true
        case let other:
            throw .at(start, "unknown declaration '\(other)' (steps start with '>', '<' or '!')")
        }
    }

    private static func mvpd(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedWorld.Provider {
        let id = try cursor.word("an MVPD id")
        var provider = SimulatedWorld.Provider(id: id, displayName: try text(&cursor, "a display name"))
        while !cursor.atEnd {
            let column = cursor.column
            switch try cursor.word("an MVPD option") {
            case "sso": provider.platformSSO = true
            case "temppass": provider.tempPass = true
            case "per-requestor": provider.perRequestor = true
            case "degraded": provider.degraded = true
            case "authn-ttl": provider.authenticationTTL = try cursor.duration()
            case "authz-ttl": provider.authorizationTTL = try cursor.duration()
            case "login-hops": provider.extraLoginHops = try cursor.number("a number of hops")
            case "no-logout-page": provider.hasLogoutPage = false
            case let other:
                throw .at(
                    column,
                    "unknown MVPD option '\(other)' (sso, temppass, per-requestor, degraded, authn-ttl, authz-ttl, login-hops, no-logout-page)")
            }
        }
        return provider
    }

    /// `provider ID [one-at-a-time] [grants R1, R2] [message "…"]`.
    private static func chainProvider(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedWorld.ChainProvider {
        let column = cursor.column
        let id = try cursor.word("a provider id")
        guard id != ProviderLink.tvProviderID else { throw .at(column, "'tv-provider' is the TV provider's id") }
        var provider = SimulatedWorld.ChainProvider(id: id)
        while !cursor.atEnd {
            let optionColumn = cursor.column
            switch try cursor.word("a provider option") {
            case "one-at-a-time": provider.requestsOneAtATime = true
            case "server": provider.kind = .server
            case "subscription": provider.kind = .subscription
            case "renews":
                guard provider.kind == .subscription else { throw .at(optionColumn, "only a `subscription` provider renews tokens") }
                provider.renews = true
            case "every":
                guard provider.kind == .subscription else { throw .at(optionColumn, "only a `subscription` provider verifies on an interval") }
                provider.verificationInterval = try cursor.duration()
            case "grants": provider.grants = Set(try cursor.wordList("a resource id"))
            case "denies":
                guard provider.kind == .server else { throw .at(optionColumn, "only a `server` provider denies (write `server` first)") }
                let resource = try cursor.word("a resource id")
                provider.denials[resource] = try text(&cursor, "the server's message")
            case "message": provider.message = try text(&cursor, "a message")
            case "pin":
                guard provider.kind == .server else { throw .at(optionColumn, "only a `server` provider asks for a PIN") }
                provider.pin = try text(&cursor, "a PIN")
                try cursor.expect("protects")
                provider.pinProtected = Set(try cursor.wordList("a resource id"))
            case let other:
                throw .at(
                    optionColumn, "unknown provider option '\(other)' (one-at-a-time, server, subscription, grants, denies, pin, renews, every, message)")
            }
        }
        // A protected resource is one the service grants once a step-up approves it.
        provider.grants.formUnion(provider.pinProtected)
        return provider
    }

    /// `verify` or `credentials`.
    private static func question(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedEntitlementProvider.Question {
        let column = cursor.column
        let word = try cursor.word("verify or credentials")
        guard let question = SimulatedEntitlementProvider.Question(rawValue: word) else {
            throw .at(column, "unknown provider question '\(word)' (verify, credentials)")
        }
        return question
    }

    /// `network`, `unavailable`, `expired`, `cancelled` or `unknown "text"`.
    private static func providerFailure(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> ProviderFailure {
        let column = cursor.column
        switch try cursor.word("a provider failure") {
        case "network": return .networkFailure
        case "unavailable": return .unavailable
        case "expired": return .subscriptionExpired
        case "cancelled": return .cancelledByUser
        case "unknown": return .unknown(try text(&cursor, "the underlying error's description"))
        case let other: throw .at(column, "unknown provider failure '\(other)' (network, unavailable, expired, cancelled, unknown \"…\")")
        }
    }

    private static func user(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedWorld.User {
        let name = try cursor.word("a user name")
        try cursor.expect("password")
        let password = try text(&cursor, "a password")
        try cursor.expect("mvpd")
        let mvpd = try cursor.word("an MVPD id")
        var user = SimulatedWorld.User(
            username: name, password: password, mvpdID: mvpd, userID: "\(mvpd)-\(name)", entitlements: [])
        while !cursor.atEnd {
            let column = cursor.column
            switch try cursor.word("a user option") {
            case "entitled": user.entitlements.formUnion(try cursor.wordList("a resource id"))
            case "denies":
                let resource = try cursor.word("a resource id")
                user.denials[resource] = try text(&cursor, "the MVPD's message")
            case "metadata":
                while case .word(let key) = cursor.peek, !["entitled", "denies", "metadata", "hba"].contains(key) {
                    _ = cursor.next()
                    let valueColumn = cursor.column
                    switch try cursor.value("a metadata value") {
                    case .text(let text): user.metadata[key] = .text(text)
                    case .list(let items):
                        user.metadata[key] = .list(
                            items.compactMap { if case .text(let text) = $0 { text } else { nil } })
                    default: throw .at(valueColumn, "a metadata value is text or a [list]")
                    }
                }
            case "hba": user.hbaResources.formUnion(try cursor.wordList("a resource id"))
            case let other: throw .at(column, "unknown user option '\(other)' (entitled, denies, metadata, hba)")
            }
        }
        return user
    }

    private static func text(_ cursor: inout TokenCursor, _ what: String) throws(ScenarioParseError.Reason) -> String {
        let column = cursor.column
        guard case .text(let text) = try cursor.value(what) else { throw .at(column, "expected \(what) as text") }
        return text
    }

    // MARK: - Steps

    private static func call(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> CallStep {
        let column = cursor.column
        switch try cursor.word("an API call") {
        case "setRequestor":
            let requestor = try cursor.value("a requestor id")
            var providers: [ValueExpression] = []
            while !cursor.atEnd { providers.append(try cursor.value("a service provider URL")) }
            return .setRequestor(requestor, serviceProviders: providers)
        case "setOptions": return .setOptions(try cursor.pairs())
        case "checkAuthentication": return .checkAuthentication
        case "getAuthentication":
            let force = cursor.accept("force")
            return .getAuthentication(force: force, data: cursor.accept("data") ? try cursor.pairs() : [:])
        case "setSelectedProvider": return .setSelectedProvider(try cursor.value("an MVPD id or nil"))
        case "handleExternalURL": return .handleExternalURL(try cursor.value("a URL"))
        case "getSelectedProvider": return .getSelectedProvider
        case "checkAuthorization":
            let resource = try cursor.value("a resource id")
            return .checkAuthorization(resource, data: cursor.accept("data") ? try cursor.pairs() : [:])
        case "getAuthorization":
            let resource = try cursor.value("a resource id")
            return .getAuthorization(resource, data: cursor.accept("data") ? try cursor.pairs() : [:])
        case "checkPreauthorizedResources":
            let resources = try cursor.value("a [list] of resource ids")
            return .checkPreauthorizedResources(resources, cache: !cursor.accept("nocache"))
        case "getMetadata":
            let keyColumn = cursor.column
            let text = try cursor.word("a metadata key (TTL_AUTHN, TTL_AUTHZ/<resource>, DEVICEID, user/<name>)")
            guard let key = ScenarioText.metadataKey(text) else {
                throw .at(keyColumn, "unknown metadata key '\(text)' (TTL_AUTHN, TTL_AUTHZ/<resource>, DEVICEID, user/<name>)")
            }
            return .getMetadata(key)
        case "logout": return .logout
        case "signIn":
            let provider = try cursor.value("a provider id")
            return .signIn(provider, credentials: try cursor.pairs())
        case "signOut": return .signOut(try cursor.value("a provider id"))
        case "completeStepUp":
            let resource = try cursor.value("a resource id")
            let outcomeColumn = cursor.column
            switch try cursor.word("succeeded or failed") {
            case "succeeded": return .completeStepUp(resource, succeeded: true)
            case "failed": return .completeStepUp(resource, succeeded: false)
            case let other: throw .at(outcomeColumn, "expected succeeded or failed, got '\(other)'")
            }
        case let other: throw .at(column, "unknown API call '\(other)'")
        }
    }

    private static func expectation(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> Step.Kind {
        let column = cursor.column
        let name = try cursor.word("a callback name or 'nothing'")
        if name == "nothing" { return .expectNothing }
        guard let arity = ScenarioText.arguments[name]?.count else { throw .at(column, "unknown callback '\(name)'") }
        var arguments: [Pattern] = []
        var acceptsMore = false
        while !cursor.atEnd {
            if case .ellipsis = cursor.peek {
                _ = cursor.next()
                acceptsMore = true
                break
            }
            arguments.append(try cursor.pattern())
        }
        let signature = ScenarioText.arguments[name]!.joined(separator: " ")
        if arguments.count > arity || (!acceptsMore && arguments.count < arity) {
            throw .at(
                column,
                "\(name) takes \(arity) argument\(arity == 1 ? "" : "s") (\(signature)), got \(arguments.count); end with '...' to skip the rest")
        }
        return .expect(Expectation(callback: name, arguments: arguments, acceptsMore: acceptsMore))
    }

    private static func holding(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> String? {
        cursor.accept("holding") ? try cursor.captureName() : nil
    }

    private static func action(_ cursor: inout TokenCursor, platform: Bool) throws(ScenarioParseError.Reason) -> WorldAction {
        let column = cursor.column
        switch try cursor.word("who acts: user, web view, clock, backend, storage, attacker, platform, second-screen, provider, server, subscriber, engine or app") {
        case "user":
            if cursor.accept("logs") {
                try cursor.expect("in as")
                let user = try cursor.value("a user name")
                try cursor.expect("with")
                let password = try cursor.value("a password")
                return .logIn(user: user, password: password, holding: try holding(&cursor))
            }
            if cursor.accept("cancels") {
                try cursor.expect("at the provider")
                return .cancelAtProvider(holding: try holding(&cursor))
            }
            if cursor.accept("confirms") {
                try cursor.expect("the step-up with PIN")
                return .confirmStepUp(pin: try text(&cursor, "a PIN"))
            }
            try cursor.expect("closes the login page")
            return .closeLoginPage
        case "web":
            try cursor.expect("view follows the logout")
            return .followLogout(holding: try holding(&cursor))
        case "clock":
            try cursor.expect("advances")
            return .advanceClock(try cursor.duration())
        case "backend":
            let verbColumn = cursor.column
            let verb = try cursor.word("fails, heals, holds, releases or resets")
            if verb == "resets" {
                try cursor.expect("temppass")
                return .resetTempPass
            }
            let operation = try self.operation(&cursor)
            switch verb {
            case "fails":
                try cursor.expect("with")
                let fault = try self.fault(&cursor)
                var untilHealed = false
                if cursor.accept("until") {
                    try cursor.expect("healed")
                    untilHealed = true
                }
                return .fail(operation, fault, untilHealed: untilHealed)
            case "heals": return .heal(operation)
            case "holds": return .hold(operation)
            case "releases": return .release(operation)
            default: throw .at(verbColumn, "unknown backend action '\(verb)' (fails, heals, holds, releases, resets temppass)")
            }
        case "attacker":
            try cursor.expect("delivers")
            let url = try cursor.value("a URL or $name")
            var edits: [URLEdit] = []
            while !cursor.atEnd {
                let editColumn = cursor.column
                switch try cursor.word("with, without, adding or at") {
                case "with": edits.append(.set(try cursor.word("a parameter name"), try cursor.value("a value")))
                case "without": edits.append(.remove(try cursor.word("a parameter name")))
                case "adding": edits.append(.append(try cursor.word("a parameter name"), try cursor.value("a value")))
                case "at": edits.append(.base(try cursor.value("a base URL")))
                case let other: throw .at(editColumn, "unknown URL edit '\(other)' (with, without, adding, at)")
                }
            }
            return .attack(url, edits)
        case "platform":
            guard platform else { throw .at(column, "the device has no platform account: add `set platform-sso` first") }
            try cursor.expect("user")
            if cursor.accept("answers") { return .platformAnswer(try pickerChoice(&cursor)) }
            if cursor.accept("signs") {
                if cursor.accept("out") { return .platformSignOut }
                try cursor.expect("in as")
                return .platformSignIn(try cursor.word("a user name"))
            }
            try cursor.expect("will")
            if cursor.accept("keep") {
                try cursor.expect("the picker open")
                return .platform(.wait)
            }
            return .platform(try pickerChoice(&cursor))
        case "second-screen":
            try cursor.expect("user enters")
            let code = try cursor.value("a registration code or $name")
            try cursor.expect("as")
            let user = try cursor.value("a user name")
            try cursor.expect("with")
            return .activate(code: code, user: user, password: try cursor.value("a password"))
        case "provider":
            let id = try cursor.word("a provider id")
            let verbColumn = cursor.column
            switch try cursor.word("grants, fails, heals, holds or releases") {
            case "holds":
                try cursor.expect("its answers")
                return .providerHolds(id)
            case "releases":
                try cursor.expect("its")
                if cursor.accept("next") {
                    try cursor.expect("answer")
                    return .providerReleasesNext(id)
                }
                try cursor.expect("answers")
                return .providerReleases(id)
            case "grants":
                let resources = cursor.accept("nothing") ? [] : try cursor.wordList("a resource id")
                let message = cursor.accept("message") ? try text(&cursor, "a message") : nil
                return .providerGrants(id, resources, message: message)
            case "fails":
                let question = try self.question(&cursor)
                try cursor.expect("with")
                let failure = try providerFailure(&cursor)
                var untilHealed = false
                if cursor.accept("until") {
                    try cursor.expect("healed")
                    untilHealed = true
                }
                return .providerFails(id, question, failure, untilHealed: untilHealed)
            case "heals":
                return .providerHeals(id, try question(&cursor))
            case let other: throw .at(verbColumn, "unknown provider action '\(other)' (grants, fails, heals, holds its answers, releases its answers, releases its next answer)")
            }
        case "server":
            let id = try cursor.word("a server provider's id")
            if cursor.accept("heals") { return .serverHeals(id) }
            if cursor.accept("invalidates") {
                try cursor.expect("tokens")
                return .serverInvalidatesTokens(id)
            }
            try cursor.expect("answers")
            let faultColumn = cursor.column
            let fault: ProgrammerFault
            switch try cursor.word("status N, garbage, array or nothing") {
            case "status": fault = .status(try cursor.number("an HTTP status"))
            case "garbage": fault = .garbage
            case "array": fault = .notAnObject
            case "nothing": fault = .noAnswer
            case let other: throw .at(faultColumn, "unknown server answer '\(other)' (status N, garbage, array, nothing)")
            }
            var untilHealed = false
            if cursor.accept("until") {
                try cursor.expect("healed")
                untilHealed = true
            }
            return .serverAnswers(id, fault, untilHealed: untilHealed)
        case "subscriber":
            let name = try cursor.word("a subscriber's user name")
            let verbColumn = cursor.column
            switch try cursor.word("lapses or renews") {
            case "lapses": return .subscription(name, lapsed: true)
            case "renews": return .subscription(name, lapsed: false)
            case let other: throw .at(verbColumn, "unknown subscriber action '\(other)' (lapses, renews)")
            }
        case "engine":
            try cursor.expect("restarts")
            return .restartEngine
        case "storage":
            if cursor.accept("heals") { return .healStorage }
            if cursor.accept("is") {
                try cursor.expect("unavailable for")
                let countColumn = cursor.column
                let count = try cursor.number("how many saves fail")
                guard (1...100).contains(count) else { throw .at(countColumn, "between 1 and 100 saves") }
                try cursor.expect(count == 1 ? "save" : "saves")
                return .storageUnavailable(saves: count)
            }
            try cursor.expect("fails saves")
            var untilHealed = false
            if cursor.accept("until") {
                try cursor.expect("healed")
                untilHealed = true
            }
            return .failSaves(untilHealed: untilHealed)
        case "app":
            try cursor.expect("on")
            let callbackColumn = cursor.column
            let callback = try cursor.word("a callback name")
            guard ScenarioText.arguments[callback] != nil, callback != "optionsRefused" else {
                throw .at(callbackColumn, "unknown callback '\(callback)'")
            }
            try cursor.expect("will call")
            return .callFromCallback(callback: callback, call: try call(&cursor))
        case let other:
            throw .at(column, "unknown actor '\(other)' (user, web view, clock, backend, storage, attacker, platform, second-screen, provider, server, subscriber, engine, app)")
        }
    }

    /// What the user does in the platform's picker: `sign in as U`, `choose M`, `choose other providers`, `cancel`.
    private static func pickerChoice(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedPlatform.Choice {
        let verbColumn = cursor.column
        switch try cursor.word("sign, choose, cancel or keep") {
        case "sign":
            try cursor.expect("in as")
            return .signIn(username: try cursor.word("a user name"))
        case "choose":
            if cursor.accept("other") {
                try cursor.expect("providers")
                return .otherProviders
            }
            return .choose(mvpdID: try cursor.word("an MVPD id or `other providers`"))
        case "cancel": return .cancel
        case let other:
            throw .at(verbColumn, "unknown platform picker action '\(other)' (sign in as, choose, cancel, keep the picker open)")
        }
    }

    private static func operation(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> BackendOperation {
        let column = cursor.column
        let name = try cursor.word("a backend operation")
        guard let operation = BackendOperation(rawValue: name) else {
            let known = BackendOperation.allCases.map(\.rawValue).joined(separator: ", ")
            throw .at(column, "unknown backend operation '\(name)' (\(known))")
        }
        return operation
    }

    private static func fault(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedFault {
        let column = cursor.column
        let kind = try cursor.word("a fault")
        switch kind {
        case "timeout": return .fail(.timeout)
        case "network": return .fail(.network("connection reset"))
        case "status":
            // An HTTP status without an enhanced error body, read as REST API V2's client reads it (429: throttled).
            return .fail(BackendError(v2HTTPStatus: try cursor.number("an HTTP status")))
        case "throttling": return .fail(.throttled(retryAfterSeconds: try cursor.number("seconds to wait")))
        case "garbage": return .answerGarbage
        case "authentication-required":
            // The service's answer when the profile is gone (action `authentication`).
            return .refuse(V2ErrorCatalogue.error("authenticated_profile_missing")!)
        case "denial":
            // A partner's denial with its own words (action `authorization`, the words in `details`).
            let code = try cursor.word("a denial code")
            let words = try text(&cursor, "a message")
            return .refuse(V2EnhancedError(status: 403, code: code, message: words, details: words, action: .authorization))
        case "not-yet": return .answerNoProfileYet
        case "missing":
            // A session request answered as if these parameters had not been sent (`resume` / `retry`).
            return .answerMissingParameters(try cursor.wordList("session parameters (mvpd, domainName, redirectUrl)"))
        case "error", "item-error":
            let codeColumn = cursor.column
            let code = try cursor.word("an enhanced error code")
            guard let error = V2ErrorCatalogue.error(code) else {
                throw .at(codeColumn, "unknown enhanced error code '\(code)' (REST API V2's, e.g. network_received_error)")
            }
            return kind == "error" ? .refuse(error) : .refuseItems(error)
        case let other:
            throw .at(
                column,
                "unknown fault '\(other)' (timeout, network, status N, throttling N, garbage, authentication-required, denial CODE \"message\", not-yet, missing PARAMETER…, error CODE, item-error CODE)")
        }
    }
}
