/// The second-screen login of cookbook E (tvOS): a registration code, polling on the machine's
/// timers, and the code's expiry.
extension EntitlementMachine {
    // MARK: - Second screen (cookbook E)

    /// The two timers of a second-screen login.
    func secondScreenTimers(_ flow: LoginFlow) -> [TimerID] {
        [.registrationPoll(flow.id), .registrationExpiry(flow.id)]
    }

    /// The provider is chosen on a second-screen device: ask the backend for a registration code.
    mutating func requestRegistrationCode(_ flow: LoginFlow, _ configuration: RequestorConfiguration) -> [Action] {
        guard let mvpd = flow.mvpd, let secondScreen = settings.secondScreen else { return [] }
        let operation = nextOperation()
        moveAuthentication(to: .requestingCode(flow, operation: operation), .secondScreen, .requestCode)
        return [
            .callBackend(
                operation,
                .registrationCode(context(configuration), mvpdID: mvpd.id, lifetime: secondScreen.codeLifetime))
        ]
    }

    /// The registration code arrived: show it (`status(REGCODE)`) and start polling; without one
    /// the login ends (REG500, as Adobe's "regcode fetch failed").
    mutating func registrationCodeAnswered(_ flow: LoginFlow, _ result: Result<BackendResponse, BackendError>) -> [Action] {
        guard let secondScreen = settings.secondScreen else { return [] }
        let failure: String
        switch result {
        case .success(.registrationCode(let code)) where code.expires > now && !code.code.isEmpty:
            moveAuthentication(to: .awaitingSecondScreen(flow, code, poll: nil), .codeIssued, .status, .startTimer)
            return [
                .emit(.status(StatusReport(code: "REGCODE", level: .info, message: code.code)), answering: []),
                .startTimer(.registrationPoll(flow.id), at: now.adding(secondScreen.pollInterval)),
                .startTimer(.registrationExpiry(flow.id), at: code.expires),
            ]
        case .success: failure = "malformed backend response: not a usable registration code"
        case .failure(let error): failure = error.summary
        }
        let notice = StatusReport(code: "REG500", level: .error, message: "No registration code: \(failure).")
        return [.emit(.status(notice), answering: [])]
            + endLogin(flow, code: ErrorCode.genericAuthentication, reason: "No registration code: \(failure).", notice: true,
                condition: result.isSuccess ? .malformedAnswer : .failed)
    }

    /// The poll is due: ask whether the code was used.
    mutating func pollRegistration(_ flow: LoginFlow, _ code: RegistrationCode) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [] }
        let operation = nextOperation()
        moveAuthentication(to: .awaitingSecondScreen(flow, code, poll: operation), .pollDue, .pollRegistration)
        return [.callBackend(operation, .checkRegistration(context(configuration), code: code.code))]
    }

    /// The poll answered: signed in on the second screen, or poll again after the interval (a
    /// failed poll too: the code's expiry ends the login, not one lost poll).
    mutating func pollAnswered(
        _ flow: LoginFlow, _ code: RegistrationCode, _ result: Result<BackendResponse, BackendError>,
        _ configuration: RequestorConfiguration
    ) -> [Action] {
        guard let secondScreen = settings.secondScreen else { return [] }
        switch result {
        case .success(.authenticated(let token))
        where token.mvpdID == flow.mvpd?.id && token.requestorID == configuration.requestorID && token.expires > now:
            moveAuthentication(to: .authenticated(token), .tokenMatchesFlow, .cancelTimer, .persist, .setAuthenticationStatus)
            selectedProviderID = token.mvpdID
            return secondScreenTimers(flow).map(Action.cancelTimer)
                + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        case .success(.registrationPending):
            moveAuthentication(to: .awaitingSecondScreen(flow, code, poll: nil), .notYetUsed, .startTimer)
        default:
            moveAuthentication(to: .awaitingSecondScreen(flow, code, poll: nil), .failed, .startTimer)
        }
        return [.startTimer(.registrationPoll(flow.id), at: now.adding(secondScreen.pollInterval))]
    }
}
