import EntitlementEngine
import EntitlementTestSupport
import Testing

/// Request deadlines are the machine's timers: each request goes out with one, its answer cancels it,
/// and a deadline that passes first fails the request exactly as the service's timeout would have.
@Suite("Request deadlines")
struct RequestDeadlineTests {
    let t0 = Timestamp(milliseconds: 1_000_000)
    let configuration = RequestorConfiguration(requestorID: "req", mvpds: [MVPD(id: "acme", displayName: "Acme")])

    func machine(_ settings: EngineSettings = EngineSettings(), stored: StoredTokens = .empty) -> EntitlementMachine {
        var machine = EntitlementMachine(settings: settings, deviceID: "dev")
        machine.recordsTransitions = true
        _ = machine.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0)
        _ = machine.handle(.configurationLoaded(OperationID(1, owner: .configuration), configuration, stored), at: t0)
        return machine
    }

    var signedIn: StoredTokens {
        StoredTokens(authentication: AuthenticationToken(mvpdID: "acme", requestorID: "req", userID: "u", expires: t0.adding(.seconds(3600))))
    }

    /// `machine` fed the deadline of `operation` and, beside it, the failure it stands for: the same
    /// effects (but the deadline's own) and the same rows.
    func expectDeadlineActsAs(_ failure: Input, _ operation: OperationID, on machine: EntitlementMachine) {
        var timedOut = machine, failed = machine
        let byDeadline = timedOut.handle(.timerFired(.requestDeadline(operation)), at: t0.adding(.seconds(30))).effects
        let byFailure = failed.handle(failure, at: t0.adding(.seconds(30))).effects
        expectEqual(byDeadline.first, .cancelRequest(operation), "the shell stops the request: \(byDeadline)")
        expectEqual(Array(byDeadline.dropFirst()), byFailure.filter { $0 != .cancelTimer(.requestDeadline(operation)) })
        #expect(timedOut.lastTransitions == failed.lastTransitions && !timedOut.lastTransitions.isEmpty, "\(timedOut.lastTransitions)")
        expectEqual(timedOut.storedTokens, failed.storedTokens)
    }

    @Test func aRequestGoesOutWithItsDeadlineAndItsAnswerCancelsIt() {
        var machine = machine(stored: signedIn)
        let operation = OperationID(2, owner: .authorization)
        let asked = machine.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0).effects
        #expect(asked == [
            .callBackend(operation, .authorize(RequestContext(requestorID: "req", deviceID: "dev"), mvpd: "acme", resource: "r")),
            .startTimer(.requestDeadline(operation), at: t0.adding(EngineSettings().requestTimeout)),
        ])
        let answered = machine.handle(.backendFailed(operation, .network("reset")), at: t0).effects
        expectEqual(answered.first, .cancelTimer(.requestDeadline(operation)), "\(answered)")
        // Once answered, the deadline (had it fired already) stops nothing the machine waits for.
        #expect(machine.handle(.timerFired(.requestDeadline(operation)), at: t0).effects
            == [.cancelRequest(operation), .log(.lateTimerIgnored(.requestDeadline(operation)))])
    }

    @Test func aBackendRequestsDeadlineFailsItAsTimedOut() {
        var authorizing = machine(stored: signedIn)
        _ = authorizing.handle(.callReceived(CallID(2), .getAuthorization(resource: "r", data: [:])), at: t0)
        expectDeadlineActsAs(.backendFailed(OperationID(2, owner: .authorization), .timeout), OperationID(2, owner: .authorization), on: authorizing)
        var loggingIn = machine()
        _ = loggingIn.handle(.callReceived(CallID(2), .setSelectedProvider("acme")), at: t0)
        _ = loggingIn.handle(.flowSecretsDrawn(FlowID(1), FlowSecrets(state: "S")), at: t0)
        expectDeadlineActsAs(.backendFailed(OperationID(2, owner: .authentication), .timeout), OperationID(2, owner: .authentication), on: loggingIn)
    }

    @Test func aProbesDeadlineFailsItAsTimedOut() {
        // A login found in the store (another instance sent the device to its page): the call reads its profile first.
        let pending = PendingLogin(
            mvpdID: "acme", state: "STATE", code: "C0DE", deadline: t0.adding(.seconds(600)), url: "https://sp/authenticate/req/C0DE")
        var probing = machine(stored: StoredTokens(selectedProvider: "acme", deviceID: "dev", pendingLogin: pending))
        let asked = probing.handle(.callReceived(CallID(2), .getAuthentication(forceAuthn: false, data: [:])), at: t0).effects
        guard let operation = asked.lazy.compactMap({ if case .callBackend(let operation, .profileByCode) = $0 { operation } else { nil } }).first
        else {
            Issue.record("no probe: \(asked)")
            return
        }
        expectDeadlineActsAs(.backendFailed(operation, .timeout), operation, on: probing)
    }

    @Test func aConfigurationsDeadlineFailsItAsTimedOut() {
        var configuring = EntitlementMachine(deviceID: "dev")
        configuring.recordsTransitions = true
        let sent = configuring.handle(.callReceived(CallID(1), .setRequestor(requestorID: "req", serviceProviders: [])), at: t0).effects
        let operation = OperationID(1, owner: .configuration)
        #expect(sent.contains(.startTimer(.requestDeadline(operation), at: t0.adding(EngineSettings().requestTimeout))), "\(sent)")
        expectDeadlineActsAs(.configurationFailed(operation, .timeout), operation, on: configuring)
    }

    @Test func aProviderRequestsDeadlineFailsItAsTheNetworkWould() {
        var settings = EngineSettings()
        settings.providers = [ProviderLink(id: "magazine", signsIn: true, renewsTokens: true), .tvProvider]
        var signingIn = machine(settings)
        let asked = signingIn.handle(.callReceived(CallID(2), .signIn(provider: "magazine", credentials: ["code": "1"])), at: t0).effects
        guard case .askProvider(let operation, _, _, _)? = asked.first else {
            Issue.record("no sign-in asked: \(asked)")
            return
        }
        #expect(asked.contains(.startTimer(.requestDeadline(operation), at: t0.adding(settings.requestTimeout))), "\(asked)")
        expectDeadlineActsAs(.providerAnswered(operation, .signedIn(.failure(.networkFailure))), operation, on: signingIn)
    }
}
