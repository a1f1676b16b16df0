import EntitlementEngine
import EntitlementSimulator

/// The scenario header: declarations, settings and directives — the world's MVPDs, providers and users.
extension ScenarioParser {
    static func header(_ cursor: inout TokenCursor, _ scenario: inout Scenario, first: Bool)
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
            switch try cursor.word("a setting (redirect-timeout, queue-limit, redirect-url, device, platform-sso, second-screen, session-ttl, storage-retry-window)") {
            case "redirect-timeout":
                scenario.settings.redirectTimeout = try cursor.duration()
            case "storage-retry-window":
                scenario.settings.storageRetryWindow = try cursor.duration()
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

    static func mvpd(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedWorld.Provider {
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
    static func chainProvider(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedWorld.ChainProvider {
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
    static func question(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedEntitlementProvider.Question {
        let column = cursor.column
        let word = try cursor.word("verify or credentials")
        guard let question = SimulatedEntitlementProvider.Question(rawValue: word) else {
            throw .at(column, "unknown provider question '\(word)' (verify, credentials)")
        }
        return question
    }

    /// `network`, `unavailable`, `expired`, `cancelled` or `unknown "text"`.
    static func providerFailure(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> ProviderFailure {
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

    static func user(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedWorld.User {
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

    static func text(_ cursor: inout TokenCursor, _ what: String) throws(ScenarioParseError.Reason) -> String {
        let column = cursor.column
        guard case .text(let text) = try cursor.value(what) else { throw .at(column, "expected \(what) as text") }
        return text
    }
}
