import EntitlementEngine
import EntitlementSupport

/// One device's journey: login (picker, page, redirect), authorization, logout (page, redirect); a TV's
/// login on a second screen; a step-up; or a direct subscription's sign-in, reads and sign-out.
struct Journey {
    let device: String
    let fleet: Fleet
    let stats: Stats
    var random: SplitMix64

    init(device: String, fleet: Fleet, stats: Stats, seed: UInt64) {
        self.device = device
        self.fleet = fleet
        self.stats = stats
        self.random = SplitMix64(seed: seed)
    }

    /// What this journey sent and got, without secrets (for a failure's report).
    private var trail: [String] = []

    mutating func run() async {
        let started = ContinuousClock.now
        let outcome = await attempt()
        stats.journey(outcome)
        stats.remember(device, outcome, trail)
        if outcome != "ok" { stats.failedJourney(device, outcome, trail, startedAt: started) }
    }

    private mutating func send(_ call: String) async -> Fleet.Answer {
        let node = Int(random.next() % UInt64(fleet.nodeCount))
        let answer = await fleet.send(call, device: device, to: node)
        stats.request(answer, call: call, node: node)
        let got = answer.problem ?? answer.lines.map { line -> String in
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
            var detail = ["navigateToUrl", "setToken"].contains(String(fields[0])) ? "" : " " + (fields.count > 1 ? fields[1] : "")
            if detail.hasPrefix(" REGCODE ") { detail = " REGCODE …" }  // the code stays off the report
            return "\(fields[0])\(detail) [\(fields.count > 2 ? fields[2] : "")]"
        }.joined(separator: ", ")
        trail.append("\(call.split(separator: " ").first ?? "")@\(node) → \(got)")
        return answer
    }

    /// Sends `call` again (to another random node) while no node answered it at all — the device's app
    /// still holds what it sends (a redirect URL above all) and retries, as an app does.
    private mutating func sendRetrying(_ call: String) async -> Fleet.Answer {
        var answer = await send(call)
        for _ in 0..<3 where answer.problem != nil { answer = await send(call) }
        return answer
    }

    /// "ok", or the first thing that went wrong (a code, `no login page`, …).
    private mutating func attempt() async -> String {
        if device.hasPrefix("pin-") { return await stepUp() }
        if device.hasPrefix("sub-") { return await readIssues() }
        var signedIn = await send("checkAuthentication").failure == "1"
        if !signedIn, device.hasPrefix("tv-") {
            if let failure = await logInOnASecondScreen() { return failure }
        } else if !signedIn {
            // Start the login; a node that finds it running elsewhere hands out its page again.
            var page: String?
            for _ in 0..<4 where page == nil && !signedIn {
                let started = await send("getAuthentication")
                if started.failure == "1" {
                    signedIn = true
                } else if let url = started.value(of: "navigateToUrl") {
                    page = url
                } else {
                    page = await send("setSelectedProvider acme-cable").value(of: "navigateToUrl")
                }
            }
            if !signedIn {
                guard let page else { return "no login page" }
                stats.secret(page)
                let visit = await fleet.simulator.userAgent.logIn(at: page, username: "alice", password: "wonderland")
                guard let redirect = visit.appURL else {
                    if case .failed(let status, let message) = visit.outcome { trail.append("login page: \(status) \(message)") }
                    return "login page failed"
                }
                let finished = await sendRetrying("handleExternalURL \(redirect)")
                guard finished.failure == "1" else { return "login: \(finished.failure ?? "no answer")" }
                stats.login("web")
            }
        }
        return await watchAndLogOut()
    }

    /// A TV's login (cookbook E): a registration code from any node, the user entering it on a second
    /// screen, then the TV asking any node until one says it is signed in (the node polling the code
    /// saves the login; the others follow the store). Nil when signed in, else what went wrong.
    private mutating func logInOnASecondScreen() async -> String? {
        var code: String?
        for _ in 0..<4 where code == nil {
            let started = await send("getAuthentication")
            if started.failure == "1" { return nil }
            // No code: the picker is open (shown now, or to an earlier request whose choice reached a
            // node that died): the TV's app knows it and sends the user's choice, as the web journey does.
            code = started.registrationCode
            if code == nil, started.problem == nil { code = await send("setSelectedProvider acme-cable").registrationCode }
        }
        guard let code else { return "no registration code" }
        let visit = await fleet.simulator.userAgent.activate(code: code, username: "alice", password: "wonderland")
        guard case .stoppedAt(let page) = visit.outcome, page.title == "Signed in" else {
            trail.append("activation page: \(visit.outcome)")
            return "activation failed"
        }
        for _ in 0..<40 {
            if await send("checkAuthentication").failure == "1" {
                stats.login("second screen")
                return nil
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
        return "second screen: never signed in"
    }

    /// A PIN-protected authorization (on any node): the step-up it asks for, the user's PIN at the
    /// programmer's page, the app's report (on any node), which is answered with the media token. A call
    /// that finds the device's last step-up still open (an earlier journey cut by a fault) waits for it to
    /// end, and asks again.
    private mutating func stepUp() async -> String {
        var transaction: String?
        for attempt in 0..<20 where transaction == nil {
            if attempt > 0 { try? await Task.sleep(for: .seconds(2)) }
            let asked = await send("getAuthorization \(Fleet.protectedResource)")
            if let token = asked.value(of: "setToken") {
                stats.secret(token)
                return "ok"
            }
            transaction = asked.value(of: "stepUpRequired")
        }
        guard let transaction else { return "step-up: never asked" }
        stats.secret(transaction)
        let approved = await fleet.simulator.confirmTransaction(
            serverID: Fleet.stepUpServer.id, form: ["transaction": transaction, "pin": Fleet.pin])
        guard case .http(200, _, _) = approved else { return "step-up: the PIN was not taken" }
        let reported = await sendRetrying("completeStepUp \(Fleet.protectedResource) succeeded")
        guard let token = reported.value(of: "setToken") else { return "step-up: \(reported.failure ?? "no answer")" }
        stats.secret(token)
        stats.login("step-up")
        return "ok"
    }

    /// A direct subscription (on any node): sign in as the device's reader, two issues read at once on
    /// two nodes, the service forgetting the reader's token, two more issues read at once on two nodes —
    /// both told the token is invalid, one renewal for the fleet (a second, with the token the first
    /// replaced, would sign the reader out) — and sign out. Issues are drawn at random: the credentials
    /// of one read are kept for good, so a second read of it asks nobody.
    private mutating func readIssues() async -> String {
        let reader = (Int(device.split(separator: "-").last ?? "") ?? 0) % Fleet.readers
        let password = Fleet.readerPassword(reader)
        stats.secret(password)
        let signIn = "signIn \(Fleet.subscription.id) username=\(Fleet.reader(reader)) password=\(password)"
        var signedIn = await sendRetrying(signIn)
        // A node whose account is still answering the provider (a verification or renewal it started
        // itself, each within the engine's 8 s request deadline) refuses PROVIDER_BUSY and asks for the
        // call again once it has answered: the device does so, a second apart, for up to 12 s — a node
        // that stays busy longer still fails the journey.
        for _ in 0..<12 where signedIn.failure == "PROVIDER_BUSY" {
            try? await Task.sleep(for: .seconds(1))
            signedIn = await sendRetrying(signIn)
        }
        guard signedIn.value(of: "providerSignInStatus") == "1" else { return "sign-in: \(signedIn.failure ?? "no answer")" }
        for round in 0..<2 {
            if round == 1 { await fleet.simulator.invalidateSubscriptionTokens(Fleet.subscription.id, of: Fleet.reader(reader)) }
            let issues = (0..<2).map { _ in "issue-\(1 + Int(random.next() % UInt64(Fleet.issues)))" }
            let nodes = (0..<2).map { _ in Int(random.next() % UInt64(fleet.nodeCount)) }
            async let first = fleet.send("getAuthorization \(issues[0])", device: device, to: nodes[0], untilAnswered: true)
            async let second = fleet.send("getAuthorization \(issues[1])", device: device, to: nodes[1], untilAnswered: true)
            for (index, answer) in await [first, second].enumerated() {
                stats.request(answer, call: "getAuthorization", node: nodes[index])
                trail.append("getAuthorization@\(nodes[index]) → \(answer.failure ?? "setToken")")
                guard let token = answer.value(of: "setToken") else { return "issue: \(answer.failure ?? "no answer")" }
                stats.secret(token)
            }
        }
        let signedOut = await send("signOut \(Fleet.subscription.id)")
        guard signedOut.value(of: "providerSignInStatus") == "0 " else { return "sign-out: \(signedOut.failure ?? "no answer")" }
        stats.login("subscription")
        return "ok"
    }

    /// Authorization, then logout (through the MVPD's logout page when the node sends one).
    private mutating func watchAndLogOut() async -> String {
        let authorized = await send("getAuthorization news-channel")
        guard let token = authorized.value(of: "setToken") else { return "authorization: \(authorized.failure ?? "no answer")" }
        stats.secret(token)
        let logout = await send("logout")
        if let logoutPage = logout.value(of: "navigateToUrl") {
            let back = await fleet.simulator.userAgent.follow(logoutPage)
            guard let redirect = back.appURL else { return "logout page failed" }
            let done = await sendRetrying("handleExternalURL \(redirect)")
            guard done.failure == ErrorCode.userNotAuthenticated else { return "logout: \(done.failure ?? "no answer")" }
        } else if logout.failure != ErrorCode.userNotAuthenticated {
            return "logout: \(logout.failure ?? "no answer")"
        }
        return "ok"
    }
}
