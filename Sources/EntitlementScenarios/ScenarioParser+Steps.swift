import EntitlementEngine
import EntitlementSimulator

/// The scenario's steps: calls, expectations, world actions and faults.
extension ScenarioParser {
    static func call(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> CallStep {
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

    static func expectation(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> Step.Kind {
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

    static func holding(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> String? {
        cursor.accept("holding") ? try cursor.captureName() : nil
    }

    static func action(_ cursor: inout TokenCursor, platform: Bool) throws(ScenarioParseError.Reason) -> WorldAction {
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
        case "host":
            try cursor.expect("gives up the provider choice")
            return .abandonProviderChoice
        case "storage":
            if cursor.accept("heals") { return .healStorage }
            if cursor.accept("loses") {
                try cursor.expect("the last write")
                return .loseLastWrite
            }
            if cursor.accept("is") {
                try cursor.expect("unavailable for")
                let countColumn = cursor.column
                let count = try cursor.number("how many saves or reads fail")
                guard (1...100).contains(count) else { throw .at(countColumn, "between 1 and 100 saves or reads") }
                if cursor.accept(count == 1 ? "read" : "reads") { return .storageUnreadable(reads: count) }
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
            throw .at(column, "unknown actor '\(other)' (user, web view, clock, backend, storage, attacker, platform, second-screen, provider, server, subscriber, engine, host, app)")
        }
    }

    /// What the user does in the platform's picker: `sign in as U`, `choose M`, `choose other providers`, `cancel`.
    static func pickerChoice(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedPlatform.Choice {
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

    static func operation(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> BackendOperation {
        let column = cursor.column
        let name = try cursor.word("a backend operation")
        guard let operation = BackendOperation(rawValue: name) else {
            let known = BackendOperation.allCases.map(\.rawValue).joined(separator: ", ")
            throw .at(column, "unknown backend operation '\(name)' (\(known))")
        }
        return operation
    }

    static func fault(_ cursor: inout TokenCursor) throws(ScenarioParseError.Reason) -> SimulatedFault {
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
