import EntitlementEngine
import EntitlementSimulator
import Testing

// MARK: - Readable comparisons

/// Compares callback sequences and, on a mismatch, prints both sides line by line (secrets shortened).
func expectCallbacks(
    _ actual: [Callback], _ expected: [Callback], sourceLocation: SourceLocation = #_sourceLocation
) {
    guard actual != expected else { return }
    var lines: [String] = []
    for index in 0..<max(actual.count, expected.count) {
        let want = index < expected.count ? expected[index].redactedDescription : "(nothing)"
        let got = index < actual.count ? actual[index].redactedDescription : "(nothing)"
        lines.append(want == got ? "  \(index): \(got)" : "✗ \(index): expected \(want)\n     got      \(got)")
    }
    let report = "callbacks differ:\n" + lines.joined(separator: "\n")
    Issue.record(Comment(rawValue: report), sourceLocation: sourceLocation)
}

/// The `status` code of a callback, if it is a status.
func statusCode(_ callback: Callback?) -> String? {
    if case .status(let report) = callback { return report.code }
    return nil
}

extension Array where Element == Callback {
    /// The URL of the last `navigateToUrl` in the list.
    var lastNavigation: String? {
        reversed().lazy.compactMap { if case .navigateToUrl(let url) = $0 { url } else { nil } }.first
    }

    /// The list without `sendTrackingData`.
    var withoutTracking: [Callback] { filter { if case .sendTrackingData = $0 { false } else { true } } }
}

/// The value of query parameter `name` in `url`.
func queryValue(_ name: String, in url: String) -> String? { (try? ExternalURL.parse(url))?.parameters[name] }

// MARK: - Sessions

extension SimulatedSession {
    /// Lets the engine settle and returns the callbacks since the last look.
    func collect() async -> [Callback] {
        await settle()
        return ledger.take()
    }

    /// Like ``collect()`` without tracking data.
    func collectIgnoringTracking() async -> [Callback] { await collect().withoutTracking }

    /// Configures `requestor` and checks it succeeded.
    func configure(_ requestor: String = "sim-requestor", sourceLocation: SourceLocation = #_sourceLocation) async {
        await enabler.setRequestor(requestor)
        expectCallbacks(await collect(), [.setRequestorComplete(success: true)], sourceLocation: sourceLocation)
    }

    /// Configures, then logs `username` in through the picker, the MVPD page and the redirect.
    func signIn(
        _ username: String = "alice", password: String = "wonderland", provider: String = "acme-cable",
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        await configure(sourceLocation: sourceLocation)
        await enabler.getAuthentication()
        await enabler.setSelectedProvider(provider)
        let (visit, call) = await logIn(as: username, password: password)
        #expect(call != nil, "login did not reach the app: \(visit.outcome)", sourceLocation: sourceLocation)
        let callbacks = await collectIgnoringTracking()
        #expect(callbacks.last == .setAuthenticationStatus(status: 1, errorCode: ""), sourceLocation: sourceLocation)
    }

    /// The start of a login: configured, picker shown, provider chosen; returns the login URL.
    func startLogin(provider: String = "acme-cable", sourceLocation: SourceLocation = #_sourceLocation) async -> String {
        await configure(sourceLocation: sourceLocation)
        await enabler.getAuthentication()
        await enabler.setSelectedProvider(provider)
        let url = await collect().lastNavigation
        #expect(url != nil, "no navigateToUrl", sourceLocation: sourceLocation)
        return url ?? ""
    }

    /// The final app URL of a successful login at `url`, not yet handed to the engine.
    func redirectURL(from url: String, username: String = "alice", password: String = "wonderland") async -> String {
        await userAgent.logIn(at: url, username: username, password: password).appURL ?? "(login failed)"
    }

    /// Fails the test for every exactly-once violation and every callback nobody checked.
    func expectClean(pending: Set<CallID> = [], sourceLocation: SourceLocation = #_sourceLocation) async {
        await enabler.whenIdle()
        let problems = ledger.violations(pending: pending)
        #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))", sourceLocation: sourceLocation)
    }
}
