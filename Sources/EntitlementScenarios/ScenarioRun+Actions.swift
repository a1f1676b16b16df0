import EntitlementEngine
import EntitlementHTTP
import EntitlementProviders
import EntitlementSimulator
import EntitlementSupport

extension ScenarioRun {
    // MARK: - Calls

    /// An engine call with its arguments resolved; it returns the `optionsRefused` pseudo-callback
    /// of a refused `setOptions`.
    typealias ResolvedCall = @Sendable (AccessEnabler) async -> ObservedCallback?

    /// Makes `call` on engine `name`.
    mutating func perform(_ call: CallStep, on name: String) async throws(Stop) {
        guard let engine = engines[name] else { return }
        let resolved = try resolve(call)
        if let refused = await resolved(engine.session.enabler) { engines[name]?.pending.append(refused) }
    }

    /// `call` with every `$name` resolved now.
    func resolve(_ call: CallStep) throws(Stop) -> ResolvedCall {
        switch call {
        case .setRequestor(let requestor, let providers):
            let (id, urls) = (try text(requestor), try providers.map { p throws(Stop) in try text(p) })
            return { await $0.setRequestor(id, serviceProviders: urls); return nil }
        case .setOptions(let pairs):
            var options: [String: String] = [:]
            for (key, value) in pairs { options[key] = try text(value) }
            return { [options] enabler in
                do throws(AccessEnabler.OptionsError) {
                    try await enabler.setOptions(options)
                } catch {
                    return ObservedCallback(optionsRefused: error.unknownKeys)
                }
                return nil
            }
        case .checkAuthentication: return { await $0.checkAuthentication(); return nil }
        case .getAuthentication(let force, let data):
            let values = try texts(data)
            return { await $0.getAuthentication(forceAuthn: force, data: values); return nil }
        case .setSelectedProvider(let id):
            let chosen = try optionalText(id)
            return { await $0.setSelectedProvider(chosen); return nil }
        case .handleExternalURL(let url):
            let value = try text(url)
            return { await $0.handleExternalURL(value); return nil }
        case .getSelectedProvider: return { await $0.getSelectedProvider(); return nil }
        case .checkAuthorization(let resource, let data):
            let (id, values) = (try text(resource), try texts(data))
            return { await $0.checkAuthorization(id, data: values); return nil }
        case .getAuthorization(let resource, let data):
            let (id, values) = (try text(resource), try texts(data))
            return { await $0.getAuthorization(id, data: values); return nil }
        case .checkPreauthorizedResources(let resources, let cache):
            guard case .list(let items) = try resolve(resources) else {
                throw Stop(expected: "a [list] of resources", actual: "\(resources)")
            }
            let names = try items.map { item throws(Stop) -> String in
                guard case .text(let name) = item else { throw Stop(expected: "resource ids", actual: item.description) }
                return name
            }
            return { await $0.checkPreauthorizedResources(names, cache: cache); return nil }
        case .signIn(let provider, let credentials):
            let (id, values) = (try text(provider), try texts(credentials))
            return { await $0.signIn(provider: id, credentials: values); return nil }
        case .signOut(let provider):
            let id = try text(provider)
            return { await $0.signOut(provider: id); return nil }
        case .completeStepUp(let resource, let succeeded):
            let id = try text(resource)
            return { await $0.completeStepUp(id, succeeded: succeeded); return nil }
        case .getMetadata(let key): return { await $0.getMetadata(key); return nil }
        case .logout: return { await $0.logout(); return nil }
        }
    }

    // MARK: - World actions

    /// Makes the world act; `name` is the engine the step addresses.
    mutating func perform(_ action: WorldAction, on name: String) async throws(Stop) {
        guard let engine = engines[name] else { return }
        let session = engine.session
        switch action {
        case .logIn(let user, let password, let holding):
            let url = try lastNavigation(of: name)
            let visit = await session.userAgent.logIn(at: url, username: try text(user), password: try text(password))
            try await arrive(visit, holding: holding, at: session.enabler)
        case .cancelAtProvider(let holding):
            let visit = await session.userAgent.cancelLogin(at: try lastNavigation(of: name))
            try await arrive(visit, holding: holding, at: session.enabler)
        case .closeLoginPage:
            await session.enabler.setSelectedProvider(nil)
        case .platform(let choice):
            session.platform?.script(choice)
        case .platformAnswer(let choice):
            guard session.platform?.answerOpenPicker(choice) == true else {
                throw Stop(expected: "a platform picker held open (`! platform user will keep the picker open`)", actual: "none is open")
            }
        case .platformSignIn(let username):
            session.platform?.signIn(username)
        case .platformSignOut:
            session.platform?.signOut()
        case .providerGrants(let id, let resources, let message):
            try chainProvider(id).grant(Set(resources), message: message)
        case .providerFails(let id, let question, let failure, let untilHealed):
            try chainProvider(id).fail(question, with: failure, untilHealed: untilHealed)
        case .providerHeals(let id, let question):
            try chainProvider(id).heal(question)
        case .providerHolds(let id):
            try requireChainProvider(id)
            for other in engines.values { await other.session.steppedProviders?.hold(id) }
        case .providerReleases(let id):
            try requireChainProvider(id)
            for other in engines.values { await other.session.steppedProviders?.releaseHeld(id) }
        case .providerReleasesNext(let id):
            try requireChainProvider(id)
            guard await session.steppedProviders?.releaseNext(id) == true else {
                throw Stop(expected: "a held request to \(id) to let through", actual: "none is held")
            }
        case .serverAnswers(let id, let fault, let untilHealed):
            await world.simulator.failProgrammer(id, with: fault, untilHealed: untilHealed)
        case .serverHeals(let id):
            await world.simulator.healProgrammer(id)
        case .confirmStepUp(let pin):
            try await confirmStepUp(pin: pin, shown: engine.app.transactionShown)
        case .serverInvalidatesTokens(let id):
            await world.simulator.invalidateSubscriptionTokens(id)
        case .subscription(let name, let lapsed):
            await world.simulator.setSubscription(of: name, lapsed: lapsed)
        case .resetTempPass:
            await world.simulator.resetTempPass(deviceID: deviceID(name))
        case .activate(let code, let user, let password):
            _ = await session.userAgent.activate(code: try text(code), username: try text(user), password: try text(password))
        case .followLogout(let holding):
            let visit = await session.userAgent.follow(try lastNavigation(of: name))
            try await arrive(visit, holding: holding, at: session.enabler)
        case .advanceClock(let duration):
            await world.clock.advance(by: duration)
        case .fail(let operation, let fault, let untilHealed):
            await world.simulator.inject(fault, into: operation, times: untilHealed ? nil : 1)
        case .heal(let operation):
            await world.simulator.heal(operation)
        case .hold(let operation):
            // Holding is the world's: every engine's answers of that operation wait.
            for other in engines.values { await other.session.stepped?.hold(operation) }
        case .release(let operation):
            for other in engines.values { await other.session.stepped?.release(operation) }
        case .attack(let url, let edits):
            var crafted = try text(url)
            for edit in edits { crafted = try apply(edit, to: crafted) }
            history.append("   attacker delivers \(Redactor.redact(crafted))")
            await session.enabler.handleExternalURL(crafted)
        case .failSaves(let untilHealed):
            engine.storage.failSaves(untilHealed: untilHealed)
        case .storageUnavailable(let saves):
            engine.storage.makeUnavailable(forSaves: saves)
        case .storageUnreadable(let reads):
            engine.storage.makeUnreadable(forReads: reads)
        case .healStorage:
            engine.storage.heal()
        case .loseLastWrite:
            guard await storage(name).loseLastWrite() else {
                throw Stop(expected: "a write the store acknowledged, to lose", actual: "no write since the last one lost")
            }
        case .restartEngine:
            // The process dies: the old engine is cut from the store and the backend, and stopped — no
            // timer of it fires and no task of it goes on when the clock later advances (a dead process
            // reacts to nothing). What it says while stopping reaches nobody: its ledger is dropped.
            engine.storage.end()
            await session.stepped?.sever()
            _ = await session.enabler.closeSession()
            _ = session.ledger.take()
            var restarted = start(name, recorder: nil, platform: session.platform)
            restarted.retired = engine.retired + [session]
            restarted.pending = engine.pending
            engines[name] = restarted
        case .abandonProviderChoice:
            guard await session.enabler.abandonProviderChoice() else {
                throw Stop(expected: "a provider picker to give up", actual: "none is open")
            }
        case .callFromCallback(let callback, let call):
            let resolved = try resolve(call)
            engine.app.on(callback) { _ = await resolved($0) }
        }
    }

    /// The URL of engine `name`'s last `navigateToUrl`.
    func lastNavigation(of name: String) throws(Stop) -> String {
        guard let url = engines[name]?.session.lastNavigation else {
            throw Stop(expected: "a navigateToUrl for the web view to open", actual: "none so far")
        }
        return url
    }

    /// Where a web-view visit ended: hand the app URL to the engine, hold it, or note the page.
    mutating func arrive(_ visit: SimulatedUserAgent.Visit, holding: String?, at enabler: AccessEnabler) async throws(Stop) {
        switch visit.outcome {
        case .reachedApp(let url):
            if let holding {
                captures[holding] = .text(url)
            } else {
                await enabler.handleExternalURL(url)
            }
        case .stoppedAt(let page):
            history.append("   web view stopped at '\(page.title)'" + (page.message.map { ": \($0)" } ?? ""))
            if let holding { throw Stop(expected: "a redirect to the app to hold as $\(holding)", actual: "the web view stopped at '\(page.title)'") }
        case .failed(let status, let message):
            throw Stop(expected: "the web view to reach the app", actual: "HTTP \(status): \(message)")
        }
    }

    /// `url` with one attacker's edit applied.
    func apply(_ edit: URLEdit, to url: String) throws(Stop) -> String {
        var base = url
        var query: [(String, String)] = []
        if let mark = url.firstIndex(of: "?") {
            base = String(url[..<mark])
            for pair in url[url.index(after: mark)...].split(separator: "&") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                let name = (try? PercentEncoding.decode(parts[0])) ?? String(parts[0])
                let value = parts.count > 1 ? ((try? PercentEncoding.decode(parts[1])) ?? String(parts[1])) : ""
                query.append((name, value))
            }
        }
        switch edit {
        case .set(let name, let value):
            let replacement = try text(value)
            if let index = query.firstIndex(where: { $0.0 == name }) {
                query[index].1 = replacement
            } else {
                query.append((name, replacement))
            }
        case .remove(let name): query.removeAll { $0.0 == name }
        case .append(let name, let value): query.append((name, try text(value)))
        case .base(let value): base = try text(value)
        }
        return PercentEncoding.url(base, query: query)
    }

    /// Refuses a provider id the script does not declare (of any kind).
    func requireChainProvider(_ id: String) throws(Stop) {
        guard scenario.world.chainProviders.contains(where: { $0.id == id }) else {
            throw Stop(expected: "a provider the script declares", actual: "no provider '\(id)'")
        }
    }

    /// The world's provider of the chain called `id`.
    func chainProvider(_ id: String) throws(Stop) -> SimulatedEntitlementProvider {
        guard let provider = world.simulator.chainProviders.first(where: { $0.id == id }) else {
            throw Stop(expected: "a provider the script declares", actual: "no provider '\(id)'")
        }
        return provider
    }

    /// `! user confirms the step-up with PIN "P"`: over HTTP the user posts the PIN to the service's
    /// step-up page for the transaction the addressed engine's app was shown (else the one asked last), as
    /// a browser would; in process the simulator takes it.
    private mutating func confirmStepUp(pin: String, shown: String?) async throws(Stop) {
        guard let pending = await world.simulator.pendingTransaction(preferring: shown), let url = world.stepUpURL(pending.server) else {
            await world.simulator.confirmTransaction(pin: pin, preferring: shown)
            return
        }
        let form = "transaction=\(PercentEncoding.encode(pending.id))&pin=\(PercentEncoding.encode(pin))"
        let request = V2OutgoingRequest(
            operation: "step-up", method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded"],
            body: Array(form.utf8))
        switch await HTTPProviderTransport(timeout: ScenarioRunner.httpPatience).send(request) {
        case .success(let answer) where answer.status == 200 || answer.status == 403:  // approved, or a wrong PIN
            history.append("   step-up page answered \(answer.status)")
        case .success(let answer):
            throw Stop(expected: "the step-up page to answer 200 or 403", actual: "HTTP \(answer.status)")
        case .failure(let failure):
            throw Stop(expected: "the step-up page to answer", actual: "\(failure)")
        }
    }
}
