/// The second-screen login of cookbook E (tvOS): the session's code is the registration code;
/// the engine shows it and polls the profile by code on its timers until the code's `notAfter`.
extension EntitlementMachine {
    // MARK: - Second screen (cookbook E)

    /// The two timers of a second-screen login.
    func secondScreenTimers(_ flow: LoginFlow) -> [TimerID] {
        [.registrationPoll(flow.id), .registrationExpiry(flow.id)]
    }

    /// The session issued its code on a second-screen device: show it (`status(REGCODE)`) and
    /// poll until the code's `notAfter` or the configured lifetime, whichever comes first.
    mutating func secondScreenCodeIssued(
        _ flow: LoginFlow, code: String, _ session: V2Session, _ configuration: RequestorConfiguration
    ) -> [Action] {
        guard let secondScreen = settings.secondScreen else { return [] }
        var waiting = flow
        waiting.code = code
        let shown = now.adding(secondScreen.codeLifetime)
        let expires = min(sessionEnd(session) ?? shown, shown)
        guard expires > now else {
            let notice = Notice.noRegistrationCode.report("No registration code: the code expired at once.")
            return endLogin(flow, code: ErrorCode.genericAuthentication, reason: "No registration code: the code expired at once.",
                    notice: notice, condition: .malformedAnswer)
        }
        let registration = RegistrationCode(code: code, expires: expires)
        moveAuthentication(to: .login(waiting, .awaitingSecondScreen(registration, poll: nil)), .codeIssued, .status, .startTimer)
        return [
            .emit(.status(Notice.registrationCode.report(code)), answering: []),
            .startTimer(.registrationPoll(flow.id), at: now.adding(secondScreen.pollInterval)),
            .startTimer(.registrationExpiry(flow.id), at: expires),
        ]
    }

    /// Whether a failed poll means the code can never work (the service refused the request
    /// itself), rather than a transient failure worth the next poll.
    static func refusesTheCode(_ error: BackendError) -> Bool {
        switch error.code {
        case .httpStatus: (400..<500).contains(error.status ?? 0)
        case .authenticationRequired, .denied: true
        default: false
        }
    }

    /// The poll is due: read the profile by the code.
    mutating func pollRegistration(_ flow: LoginFlow, _ code: RegistrationCode) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [] }
        let operation = nextOperation(.authentication)
        moveAuthentication(to: .login(flow, .awaitingSecondScreen(code, poll: operation)), .pollDue, .pollRegistration)
        return [.callBackend(operation, .profileByCode(context(configuration), code: code.code))]
    }

    /// The poll answered: signed in on the second screen, or poll again after the interval (a
    /// failed poll too: the code's expiry ends the login, not one lost poll). A poll the service
    /// refuses (a 4xx) asks the session's status (`GET sessions/{code}`): a session the service still
    /// holds is a pending code, polled on; one it refuses too (an unknown or expired session) ends the
    /// login at once — or, when a call asked for the code and it was not shown yet, starts a new session.
    /// A code waiting to be shown (``LoginFlow/showsCodeAfterRead``) is shown when the read finds it open.
    mutating func pollAnswered(
        _ flow: LoginFlow, _ code: RegistrationCode, _ result: Result<BackendResponse, BackendError>,
        _ configuration: RequestorConfiguration
    ) -> [Action] {
        var flow = flow
        let checkedSession = flow.checksSession
        flow.checksSession = false
        switch result {
        case .success(.sessionStatus):
            // The service holds the session (it refuses an unknown or expired one): the code is pending.
            return pollOn(flow, code, .codePending)
        case .failure(let error) where Self.refusesTheCode(error) && !checkedSession:
            var checking = flow
            checking.checksSession = true
            let operation = nextOperation(.authentication)
            moveAuthentication(to: .login(checking, .awaitingSecondScreen(code, poll: operation)), .codeRefused, .checkSession)
            return [.callBackend(operation, .session(context(configuration), code: code.code))]
        case .success(.profiles(let profiles)):
            if let mvpd = flow.mvpd, let token = bestProfile(profiles, configuration, mvpd: mvpd.id) {
                moveAuthentication(to: .authenticated(token), .profileMatchesFlow, .cancelTimer, .setAuthenticationStatus)
                selectedProviderID = token.mvpdID
                return secondScreenTimers(flow).map(Action.cancelTimer)
                    + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                    + resumeAuthorizationsAfterLogin(token, configuration)
            }
            return pollOn(flow, code, .notYetUsed)
        case .failure(let error) where Self.refusesTheCode(error):
            if flow.showsCodeAfterRead == .asked, let mvpd = flow.mvpd {
                // Never shown, and a call waits for a code: a new session's code, not a dead one.
                let fresh = LoginFlow(id: nextFlow(), mvpd: mvpd, secrets: nil, deadline: nil, waiters: flow.waiters, data: flow.data)
                moveAuthentication(to: .login(fresh, .preparingLogin), .sessionGone, .cancelTimer, .drawSecrets)
                return secondScreenTimers(flow).map(Action.cancelTimer)
            }
            let notice = Notice.registrationCodeExpired.report(sentence("The service no longer knows the registration code (\(error.summary))"))
            return endRegistration(flow, notice: notice)
        default:
            return pollOn(flow, code, .failed)
        }
    }

    /// The code is still open (or the read failed, and nothing says otherwise): shown now if it waited to
    /// be, then polled again after the interval.
    private mutating func pollOn(_ flow: LoginFlow, _ code: RegistrationCode, _ condition: TransitionGuard) -> [Action] {
        guard let secondScreen = settings.secondScreen else { return [] }
        var polling = flow
        let shows = polling.showsCodeAfterRead != nil
        polling.showsCodeAfterRead = nil
        moveAuthentication(to: .login(polling, .awaitingSecondScreen(code, poll: nil)), condition, (shows ? [.status] : []) + [.startTimer])
        let shown: [Action] = shows ? [.emit(.status(Notice.registrationCode.report(code.code)), answering: [])] : []
        return shown + [.startTimer(.registrationPoll(flow.id), at: now.adding(secondScreen.pollInterval))]
    }

    /// The device asks for the code again (`getAuthentication`, or `getAuthorization` while signed out): the
    /// user may have entered it on the phone since the last poll, or the service dropped it, so its profile
    /// is read now (unless a read is in flight) and the code shown when the read finds it open. `flow` holds
    /// `id`, a `getAuthentication`, among its waiters already.
    mutating func readCodeAgain(
        _ flow: LoginFlow, _ code: RegistrationCode, poll: OperationID?, joining id: CallID?, _ configuration: RequestorConfiguration
    ) -> [Action] {
        var asking = flow
        asking.showsCodeAfterRead = .asked
        let joined: [Action] = id.map { [.log(.joined($0, flow: "the running login"))] } ?? []
        let join: [TransitionAction] = id == nil ? [] : [.join]
        guard poll == nil else {
            moveAuthentication(to: .login(asking, .awaitingSecondScreen(code, poll: poll)), .codeAskedAgain, join)
            return joined
        }
        let operation = nextOperation(.authentication)
        moveAuthentication(to: .login(asking, .awaitingSecondScreen(code, poll: operation)), .codeAskedAgain, join + [.cancelTimer, .pollRegistration])
        return joined + [
            .cancelTimer(.registrationPoll(flow.id)), .callBackend(operation, .profileByCode(context(configuration), code: code.code)),
        ]
    }

    /// A registration code this device showed before the engine started again (the app restarted)
    /// waits in storage: its profile is read, and the code shown again (`status(REGCODE)`) and polled until
    /// it expires if it is still open — the user may finish on the phone at any time, or may have already.
    /// Nothing on a device that is not a second-screen one.
    mutating func resumeRegistration(_ pending: PendingRegistration?, _ configuration: RequestorConfiguration) -> [Action]? {
        guard let resumed = takeUpRegistration(pending, waiters: [], data: [:], [], configuration, showing: .restarted) else { return nil }
        selectedProviderID = pending?.mvpdID
        return resumed
    }

    /// Another instance showed a registration code for the device while this one holds its provider choice
    /// open (the user chose through that instance): the choice is made, so this login waits for that code —
    /// read, shown here too if still open, and polled until it expires — with the calls that waited for the
    /// choice, and the device asking here is shown the code rather than a picker. `rowActions` are the
    /// picker's own (dismissing the platform's).
    mutating func followRegistration(
        _ pending: PendingRegistration?, choosing flow: LoginFlow, _ rowActions: [TransitionAction], _ configuration: RequestorConfiguration
    ) -> [Action]? {
        takeUpRegistration(pending, waiters: flow.waiters, data: flow.data, rowActions, configuration, showing: .asked)
    }

    /// A login of its own for a registration code the store holds: its profile is read at once — another
    /// instance may have missed the user entering it on the phone (it died, or had not polled yet), and the
    /// service refuses a code entered twice — then the code is shown (`status(REGCODE)`) and polled until it
    /// expires if still open (``pollAnswered(_:_:_:_:)``). Nil when no live code of a known provider is
    /// stored, or the device is not a second-screen one.
    mutating func takeUpRegistration(
        _ pending: PendingRegistration?, waiters: [CallID], data: [String: String], _ rowActions: [TransitionAction],
        _ configuration: RequestorConfiguration, showing: CodeShowing
    ) -> [Action]? {
        guard let pending, pending.expires > now, settings.secondScreen != nil, let mvpd = configuration.mvpd(pending.mvpdID)
        else { return nil }
        var flow = LoginFlow(id: nextFlow(), mvpd: mvpd, secrets: nil, deadline: nil, waiters: waiters, data: data)
        flow.code = pending.code
        flow.showsCodeAfterRead = showing
        let registration = RegistrationCode(code: pending.code, expires: pending.expires)
        let operation = nextOperation(.authentication)
        moveAuthentication(
            to: .login(flow, .awaitingSecondScreen(registration, poll: operation)), .pendingRegistration,
            rowActions + [.startTimer, .pollRegistration])
        return [
            .startTimer(.registrationExpiry(flow.id), at: pending.expires),
            .callBackend(operation, .profileByCode(context(configuration), code: pending.code)),
        ]
    }

    /// A second-screen login whose code died (it expired, or the service dropped it for a newer one)
    /// ends. When the store holds another instance's code (``foreignStore``) — the newer one, which the
    /// user may still enter there — this instance leaves the store as it is instead of saving its own
    /// ended login over that code: the instance polling it would take that for a cancel.
    mutating func endRegistration(_ flow: LoginFlow, notice: StatusReport) -> [Action] {
        let othersCode = foreignStore.flatMap(\.pendingRegistration).map { $0.code != flow.code } ?? false
        let ended = endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The registration code expired.", notice: notice, condition: .codeExpired)
        // What this instance saves is its view; counting that as stored saves nothing over the other code.
        if othersCode { persisted = storedTokens }
        return ended
    }
}
