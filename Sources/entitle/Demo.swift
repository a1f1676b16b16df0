import EntitlementEngine
import EntitlementProviders
import EntitlementScenarios
import EntitlementSimulator

/// `entitle demo`: cookbook flows B, C, F, G and H on the embedded simulator, then D and I on a
/// second device that has a platform TV-provider account, and E on a TV that logs in on a second
/// screen, printed as a transcript with the REST API V2 requests the engine makes (`⇢`) and what
/// they answered (`⇠`). Manual clock and seeded randomness: the same output every run.
struct Demo {
    private static func echo(_ event: EngineEvent) {
        switch event {
        case .callReceived, .callbackEmitted, .log:
            print("  " + event.redactedDescription)
        case .providerAsked(_, let provider, let request):
            print("      ⇢ provider \(provider): \(request.redactedDescription)")
        case .backendRequested(_, let sent):
            print("      ⇢ \(sent.request.v2.method.rawValue) \(Redactor.redact(sent.request.v2.target))")
        case .backendFinished(_, let outcome):
            switch outcome.result {
            case .success(let response): print("      ⇠ \(Redactor.redact(summary(response)))")
            case .failure(let error): print("      ⇠ failed: \(error.summary)")
            }
        case .storageFailed, .transition, .started, .inputHandled:
            break
        }
    }

    /// One line for an answer: what a reader of the transcript needs, no secret.
    private static func summary(_ response: BackendResponse) -> String {
        switch response {
        case .configuration(let configuration): "configuration: \(configuration.mvpds.count) MVPDs"
        case .session(let session):
            "session: \(session.actionName.rawValue)/\(session.actionType.rawValue), reason \(session.reasonType.rawValue)"
        case .sessionStatus(let status):
            "session status: " + (status.missingParameters.isEmpty ? "nothing missing" : "missing " + status.missingParameters.joined(separator: ", "))
        case .profiles(let profiles):
            profiles.isEmpty
                ? "profiles: none yet"
                : "profiles: " + profiles.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value.kind.rawValue))" }.joined(separator: ", ")
        case .decisions(let decisions):
            "decisions: " + decisions.map { "\($0.resource) \($0.authorized ? "permit" : "deny (\($0.error?.code ?? "no code"))")" }.joined(separator: ", ")
        case .logouts(let logouts):
            "logout: " + logouts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value.actionName.rawValue)/\($0.value.actionType.rawValue)" }.joined(separator: ", ")
        }
    }

    private let session = SimulatedSession(deliversInOrder: true, echo: Demo.echo)
    /// A second device, signed in to nothing yet, whose platform offers its TV-provider picker.
    private let platformSession = SimulatedSession(deviceID: "device-2", deliversInOrder: true, echo: Demo.echo, platformSSO: true)
    /// A TV that logs in on a second screen (cookbook E).
    private let tvSession = SimulatedSession(
        deviceID: "living-room-tv", settings: { () -> EngineSettings in
            var settings = EngineSettings()
            settings.secondScreen = SecondScreen()
            return settings
        }(), deliversInOrder: true, echo: Demo.echo)

    private var enabler: AccessEnabler { session.enabler }

    /// A device whose app also sells a magazine subscription and asks its own service for kids' titles.
    private let providersSession: SimulatedSession = {
        var world = SimulatedWorld.default
        var magazine = SimulatedWorld.ChainProvider(id: "magazine")
        magazine.kind = .subscription
        var kids = SimulatedWorld.ChainProvider(id: "kids", grants: ["cartoon-1", "thriller-1"])
        kids.kind = .server
        kids.pin = "4321"
        kids.pinProtected = ["thriller-1"]
        world.chainProviders = [magazine, kids]
        world.subscribers = [
            SimulatedWorld.Subscriber(
                username: "ann", password: "sesame", providerID: "magazine", issues: ["issue-1", "issue-2"],
                message: "Gold subscriber until March.")
        ]
        var settings = EngineSettings()
        settings.stepUp = StepUpSettings(resources: ["thriller-1"])
        let clock = ManualClock()
        let simulator = Simulator(world: world, clock: clock, seed: 107)
        let chain = try? ProviderChain([
            .provider(
                DirectSubscriptionProvider(
                    id: "magazine", endpoints: .init(base: "sim://security-api/magazine", renews: false),
                    transport: SimulatedSecurityAPITransport(simulator: simulator, providerID: "magazine"))),
            .provider(
                ServerAuthorizationProvider(
                    id: "kids", url: "sim://programmer/kids/authorize", resources: ["cartoon-1", "thriller-1"],
                    transport: SimulatedProgrammerTransport(simulator: simulator, serverID: "kids"))),
            .tvProvider,
        ])
        return SimulatedSession(
            world: world, deviceID: "tablet-3", settings: settings, clock: clock, simulator: simulator, deliversInOrder: true,
            echo: Demo.echo, providers: chain)
    }()

    func run() async -> Int32 {
        print("EntitlementEngine demo: cookbook flows B, C, F, G, H, D, I and E against the embedded simulator, then J: providers beyond TV providers")
        print("(manual clock, seeded randomness: the same transcript every run; secrets are shortened)")

        section("B. Startup: calls made before setRequestor completes are queued, then run in order")
        await enabler.setRequestor("sim-requestor")
        await enabler.checkAuthentication()
        await session.settle()

        section("C. Authentication without platform SSO: picker, session, MVPD login page, redirect, profile")
        await enabler.getAuthentication()
        await enabler.setSelectedProvider("acme-cable")
        await session.settle()
        guard await browseLogin(username: "alice", password: "wonderland") else { return 1 }
        note("optional: decorate the UI with pre-authorized resources")
        await enabler.checkPreauthorizedResources(["news-channel", "sports-live", "movies-hd", "kids-zone"])
        await session.settle()

        section("F. Authorization: one decision per call, each with a fresh media token")
        await enabler.getAuthorization("sports-live")
        await session.settle()
        note("again: a new decision, a new media token (decisions are never reused)")
        await enabler.getAuthorization("sports-live")
        await session.settle()
        note("a resource the requestor does not know: an authorization (AuthZ) error")
        await enabler.getAuthorization("pay-per-view")
        await session.settle()

        section("G. View media: only protected media goes through authorization")
        for (title, resource) in [("Free trailer", nil), ("Movies HD", "movies-hd")] as [(String, String?)] {
            guard let resource else {
                note("'\(title)' is not protected: play it at once")
                continue
            }
            note("'\(title)' is protected: authorize '\(resource)' first")
            await enabler.checkAuthorization(resource)
            await session.settle()
        }

        section("H. Logout without platform SSO: local tokens first, the service's logout, then the MVPD's page")
        await enabler.logout()
        await session.settle()
        guard let logoutURL = session.lastNavigation else { return fail("no logout navigateToUrl") }
        let visit = await session.userAgent.follow(logoutURL)
        printHops(visit)
        guard let back = visit.appURL else { return fail("the logout chain did not reach the app") }
        await enabler.handleExternalURL(back)
        await enabler.checkAuthentication()
        await session.settle()

        guard await platformFlows() else { return 1 }
        guard await secondScreenFlow() else { return 1 }
        guard await beyondTVProviders() else { return 1 }

        let problems = [session, platformSession, tvSession, providersSession].flatMap {
            $0.ledger.violations().filter { !$0.hasPrefix("callbacks nobody checked") }
        }
        print("")
        guard problems.isEmpty else {
            for problem in problems { print("exactly-once violation: \(problem)") }
            return 1
        }
        let callbacks = [session, platformSession, tvSession, providersSession].map(\.ledger.callbacks.count).reduce(0, +)
        print("Done: every call got exactly one terminal callback (\(callbacks) callbacks in all).")
        return 0
    }

    /// Cookbook D and I on the second device.
    private func platformFlows() async -> Bool {
        let enabler = platformSession.enabler
        guard let platform = platformSession.platform else { return fail("no platform") == 0 }
        section("D. Authentication with platform SSO: the platform's picker, no web view")
        await enabler.setRequestor("sim-requestor")
        await platformSession.settle()
        note("the user will pick BlueSky TV in the platform's picker and sign in there as carol")
        platform.script(.signIn(username: "carol"))
        await enabler.getAuthentication()
        await platformSession.settle()
        note("the profile from the platform's sign-in authorizes as usual")
        await enabler.getAuthorization("movies-hd")
        await platformSession.settle()

        section("I. Logout with platform SSO: this app signs out, the platform account does not (VSA203)")
        note("the service answers partner_logout: no page opens, the logout ends at once")
        await enabler.logout()
        await platformSession.settle()
        note("the platform account is still signed in as \(platform.signedInUser ?? "nobody")")
        note("so the next setRequestor (an app restart) signs this app in again, silently")
        await enabler.setRequestor("sim-requestor")
        await enabler.checkAuthentication()
        await platformSession.settle()
        return true
    }

    /// Cookbook E on a TV: a registration code, polling on the clock, a sign-in on a phone.
    private func secondScreenFlow() async -> Bool {
        let enabler = tvSession.enabler
        section("E. Authentication on a second screen (tvOS): the session's code, and polling the profile by it")
        await enabler.setRequestor("sim-requestor")
        await enabler.getAuthentication()
        await tvSession.settle()
        await enabler.setSelectedProvider("bluesky-tv")
        await tvSession.settle()
        let code = tvSession.ledger.callbacks.reversed().lazy.compactMap { callback -> String? in
            if case .status(let report) = callback, report.code == "REGCODE" { return report.message }
            return nil
        }.first
        guard let code else { return fail("no registration code") == 0 }
        note("the TV shows the code; 5 s later the engine polls: not used yet")
        await tvSession.clock.advance(by: .seconds(5))
        await tvSession.settle()
        note("on a phone, carol opens the activation page, enters the code and signs in at BlueSky TV")
        let visit = await tvSession.userAgent.activate(code: code, username: "carol", password: "carolina")
        printHops(visit)
        note("the next poll finds her signed in")
        await tvSession.clock.advance(by: .seconds(5))
        await tvSession.settle()
        return true
    }

    /// Beyond TV providers: a chain of a direct subscription, the programmer's own service and the TV provider.
    private func beyondTVProviders() async -> Bool {
        let enabler = providersSession.enabler
        section("J. Beyond TV providers: a direct subscription, the programmer's own service with a PIN step-up, then the TV provider")
        await enabler.setRequestor("sim-requestor")
        await providersSession.settle()
        note("ann signs in to the magazine (Pugpig's Security API): the password goes to the service once, never stored")
        await enabler.signIn(provider: "magazine", credentials: ["username": "ann", "password": "sesame"])
        await providersSession.settle()
        note("the magazine claims its issues: their credentials come from the subscription and are kept for good")
        await enabler.getAuthorization("issue-1")
        await providersSession.settle()
        note("the programmer's own service decides its titles; a thriller needs the parental PIN first")
        await enabler.getAuthorization("cartoon-1")
        await enabler.getAuthorization("thriller-1")
        await providersSession.settle()
        note("the app asks for the PIN; the user enters it on the service; the app reports the step-up")
        await providersSession.simulator.confirmTransaction(pin: "4321")
        await enabler.completeStepUp("thriller-1", succeeded: true)
        await providersSession.settle()
        note("nobody claims news-channel: the chain's last link, the TV provider, answers (nobody signed in with one)")
        await enabler.checkAuthorization("news-channel")
        await providersSession.settle()
        note("signed out of the magazine, issue-1's credentials stay; the app is told what changed")
        await enabler.signOut(provider: "magazine")
        await enabler.getAuthorization("issue-1")
        await providersSession.settle()
        return true
    }

    private func browseLogin(username: String, password: String) async -> Bool {
        guard let url = session.lastNavigation else { return fail("no navigateToUrl") == 0 }
        note("the web view opens navigateToUrl; \(username) signs in")
        let visit = await session.userAgent.logIn(at: url, username: username, password: password)
        printHops(visit)
        guard let appURL = visit.appURL else { return fail("the login did not reach the app") == 0 }
        await enabler.handleExternalURL(appURL)
        await session.settle()
        return true
    }

    private func printHops(_ visit: SimulatedUserAgent.Visit) {
        for hop in visit.hops { print("      ~ \(Redactor.redact(hop))") }
    }

    private func section(_ title: String) { print("\n== \(title)") }
    private func note(_ text: String) { print("  -- \(text)") }

    private func fail(_ why: String) -> Int32 {
        print("demo failed: \(why)")
        return 1
    }
}
