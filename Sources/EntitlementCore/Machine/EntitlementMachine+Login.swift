import EntitlementSupport

/// The authentication region, a login's steps once its provider is chosen: the flow's secrets, the
/// session, the redirect's deadline, the profile read, and how a login ends (signed in, failed,
/// expired, abandoned) with every waiting call answered.
extension EntitlementMachine {
    /// The redirect URL sent in a session or logout request: the app's, with the flow's `state`
    /// (and the MVPD) added, so the redirect is bound to this flow.
    func redirectURL(state: String, mvpdID: String?) -> String {
        if let mvpdID {
            PercentEncoding.url(settings.redirectURL, query: [("state", state), ("mvpd", mvpdID)])
        } else {
            PercentEncoding.url(settings.redirectURL, query: [("state", state)])
        }
    }

    mutating func flowSecretsDrawn(_ flowID: FlowID, _ secrets: FlowSecrets) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [.log(.lateSecretsIgnored(flowID))] }
        switch authentication {
        case .login(var flow, .preparingLogin) where flow.id == flowID:
            guard let mvpd = flow.mvpd else { return [.log(.lateSecretsIgnored(flowID))] }
            flow.secrets = secrets
            let operation = nextOperation(.authentication)
            // A second screen has no redirect of its own: it supplies its `redirectUrl` when it resumes the session.
            let secondScreen = settings.secondScreen != nil
            moveAuthentication(
                to: .login(flow, .creatingSession(operation: operation)), secondScreen ? .secondScreen : nil, .createSession)
            let redirect = secondScreen ? nil : redirectURL(state: secrets.state, mvpdID: mvpd.id)
            return [
                .callBackend(
                    operation,
                    .createSession(context(configuration), mvpd: mvpd.id, domainName: settings.domainName, redirectURL: redirect))
            ]
        case .logout(var flow, .preparingLogout) where flow.id == flowID:
            guard let mvpdID = flow.mvpdID else { return [.log(.lateSecretsIgnored(flowID))] }
            flow.secrets = secrets
            let operation = nextOperation(.authentication)
            moveAuthentication(to: .logout(flow, .requestingLogout(operation: operation)), nil, .requestLogout)
            return [
                .callBackend(
                    operation,
                    .logout(context(configuration), mvpd: mvpdID, redirectURL: redirectURL(state: secrets.state, mvpdID: nil)))
            ]
        default:
            return [.log(.lateSecretsIgnored(flowID))]
        }
    }

    /// The session answered: open its login URL (or, on a second screen, show its code and poll),
    /// or — `authorize`, no login needed — read the profile at once.
    mutating func sessionAnswered(
        _ flow: LoginFlow, _ result: Result<BackendResponse, BackendError>, _ configuration: RequestorConfiguration
    ) -> [Action] {
        guard let mvpd = flow.mvpd else { return [] }
        var failure: String
        switch result {
        case .success(.session(let session)) where session.actionName == .authorize:
            let operation = nextOperation(.authentication)
            moveAuthentication(
                to: .login(flow, .readingProfile(operation: operation, attempt: 1)), mvpd.isTempPass ? .tempPass : .noLoginNeeded,
                .readProfile)
            return [.callBackend(operation, .profile(context(configuration), mvpd: mvpd.id))]
        case .success(.session(let session))
        where (session.actionName == .resume || session.actionName == .retry) && settings.secondScreen == nil:
            // The service lacks parameters (`resume`; `retry` after a resume): give them once — all the
            // engine has — and go on with its answer; a second time, or one the engine cannot give, fails.
            let missing = session.missingParameters ?? []
            let givable = settings.domainName == nil ? Self.sessionParameters.subtracting(["domainName", "domain"]) : Self.sessionParameters
            let unknown = missing.filter { !givable.contains($0) }
            guard !flow.resumed, unknown.isEmpty, let code = session.code, !code.isEmpty, let secrets = flow.secrets else {
                failure = flow.resumed
                    ? "the session still lacks parameters once resumed (\(missing.joined(separator: ", ")))"
                    : unknown.isEmpty
                        ? "malformed backend response: the session has no code to resume"
                        : "the service lacks parameters the engine cannot give (\(unknown.joined(separator: ", ")))"
                            + (unknown.contains { $0 == "domainName" || $0 == "domain" } ? "; set EngineSettings.domainName to the app's domain" : "")
                break
            }
            var resuming = flow
            resuming.resumed = true
            let operation = nextOperation(.authentication)
            moveAuthentication(to: .login(resuming, .creatingSession(operation: operation)), .missingParameters, .resumeSession)
            return [
                .callBackend(
                    operation,
                    .resumeSession(
                        context(configuration), code: code, mvpd: mvpd.id, domainName: settings.domainName,
                        redirectURL: redirectURL(state: secrets.state, mvpdID: mvpd.id)))
            ]
        case .success(.session(let session)) where !session.actionName.isKnown:
            failure = "the service answered the action '\(session.actionName.rawValue.prefix(32))', which this engine does not know"
        case .success(.session(let session)):
            guard let code = session.code, !code.isEmpty, !mvpd.isTempPass,
                session.actionName == .authenticate || session.actionName == .resume
            else {
                failure = "malformed backend response: the session has no login for this flow"
                break
            }
            if settings.secondScreen != nil { return secondScreenCodeIssued(flow, code: code, session, configuration) }
            guard session.actionName == .authenticate, let url = session.url, !url.isEmpty else {
                failure = "malformed backend response: the session has no login URL"
                break
            }
            var waiting = flow
            waiting.code = code
            var deadline = now.adding(settings.redirectTimeout)
            if let end = sessionEnd(session), end < deadline { deadline = end }
            guard deadline > now else {
                failure = "the session expired before it started"
                break
            }
            waiting.deadline = deadline
            waiting.url = url
            moveAuthentication(to: .login(waiting, .awaitingRedirect), .loginNeeded, .startTimer, .navigateToUrl)
            return [.startTimer(.redirectDeadline(flow.id), at: deadline), .emit(.navigateToUrl(url), answering: [])]
        case .success:
            failure = "malformed backend response: not a session"
        case .failure(let error):
            failure = error.summary
        }
        if settings.secondScreen != nil {
            let notice = Notice.noRegistrationCode.report(sentence("No registration code: \(failure)"))
            return endLogin(flow, code: ErrorCode.genericAuthentication, reason: sentence("No registration code: \(failure)"),
                    notice: notice, condition: result.isSuccess ? .malformedAnswer : .failed)
        }
        let what = mvpd.isTempPass ? "The TempPass request" : "The login session"
        let notice = Notice.loginFailed.report(sentence("\(what) failed: \(failure)"))
        return endLogin(flow, code: ErrorCode.genericAuthentication, reason: sentence("The login failed: \(failure)"),
                notice: notice, condition: result.isSuccess ? .malformedAnswer : .failed)
    }

    /// The session parameters the engine gives when a session lacks them (`domain` is how Adobe's sample
    /// names `domainName`; the domain only when ``EngineSettings/domainName`` is set).
    static let sessionParameters: Set<String> = ["mvpd", "domainName", "domain", "redirectUrl"]

    /// When a session's code stops being usable, on this engine's clock: the session's own window
    /// (`notAfter − notBefore`) counted from now, so a device whose clock is off by minutes neither
    /// loses nor gains time; the bare `notAfter` when the session gives no `notBefore`.
    func sessionEnd(_ session: V2Session) -> Timestamp? {
        guard let notAfter = session.notAfter else { return nil }
        guard let notBefore = session.notBefore else { return notAfter }
        return now.adding(.milliseconds(Saturating.subtract(notAfter.milliseconds, notBefore.milliseconds)))
    }

    /// How many times the profile is read after a redirect before the login counts as failed, and
    /// the pause between reads: a short, bounded wait for a service that saves the profile a moment
    /// after the browser came back (V2's polling advice: every 3–5 s).
    package static let profileReads = 4
    /// The pause between two reads of a profile that is not there yet.
    package static let profileReadPause = Duration.seconds(3)

    mutating func timerFired(_ timer: TimerID) -> [Action] {
        switch (timer, authentication) {
        case (.registrationPoll(let flowID), .login(let flow, .awaitingSecondScreen(let code, nil))) where flow.id == flowID:
            return pollRegistration(flow, code)
        case (.registrationExpiry(let flowID), .login(let flow, .awaitingSecondScreen)) where flow.id == flowID:
            let notice = Notice.registrationCodeExpired.report("The registration code expired before it was used.")
            return endRegistration(flow, notice: notice)
        case (.profileRead(let flowID), .login(let flow, .readingProfile(nil, let attempt))) where flow.id == flowID:
            guard case .configured(let configuration) = configuration, let code = flow.code else { return [] }
            let operation = nextOperation(.authentication)
            moveAuthentication(to: .login(flow, .readingProfile(operation: operation, attempt: attempt + 1)), .pollDue, .readProfile)
            return [.callBackend(operation, .profileByCode(context(configuration), code: code))]
        case (.redirectDeadline(let flowID), .login(let flow, .awaitingRedirect)) where flow.id == flowID:
            // A timer set for an earlier deadline is late: another instance restarted the login (a later
            // deadline came with it from the store), or is completing it (it stands past the deadline).
            if let stands = flow.completingElsewhere.map({ expiry(of: $0) }) ?? flow.deadline, now < stands {
                return [.log(.lateTimerIgnored(timer))]
            }
            return expireLogin(flow)
        case (.redirectDeadline(let flowID), .logout(let flow, .loggingOut)) where flow.id == flowID:
            // A timer set for an earlier deadline is late: another instance started the logout again.
            if let deadline = flow.deadline, now < deadline { return [.log(.lateTimerIgnored(timer))] }
            let notice = Notice.logoutTimedOut.report("The logout redirect did not come back in time; local tokens were already cleared.")
            return finishLogout(flow, alsoAnswering: [], notice: notice)
        default:
            return [.log(.lateTimerIgnored(timer))]
        }
    }

    /// The login passed its deadline: remember its state (a late redirect is refused as `expired`) and end it.
    mutating func expireLogin(_ flow: LoginFlow, condition: TransitionGuard? = nil) -> [Action] {
        expiredFlowState = flow.secrets?.state
        let notice = Notice.loginExpired.report("The login expired before the provider redirected back.")
        return endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The login expired.", notice: notice,
                condition: condition)
    }

    /// The login's profile answered: signed in; or not there yet — read again after a pause, a
    /// few times; or the login failed.
    mutating func profileAnswered(
        _ flow: LoginFlow, attempt: Int, _ result: Result<BackendResponse, BackendError>,
        _ configuration: RequestorConfiguration
    ) -> [Action] {
        let failure: String
        switch result {
        case .success(.profiles(let profiles)):
            if let mvpd = flow.mvpd, let token = bestProfile(profiles, configuration, mvpd: mvpd.id) {
                return signedIn(flow, token, configuration)
            }
            guard flow.code != nil, flow.secrets != nil else {
                failure = "the service has no valid profile for this login"
                return loginFailed(flow, failure, .malformedAnswer)
            }
            guard attempt < Self.profileReads else {
                failure = "the service saved no profile for this login in time"
                return loginFailed(flow, failure, .profileWaitOver)
            }
            moveAuthentication(to: .login(flow, .readingProfile(operation: nil, attempt: attempt)), .profileNotYet, .startTimer)
            return [.startTimer(.profileRead(flow.id), at: now.adding(Self.profileReadPause))]
        case .success:
            return loginFailed(flow, "malformed backend response: not a profile", .malformedAnswer)
        case .failure(let error) where error.code == .throttled && flow.code != nil && attempt < Self.profileReads
            && Duration.seconds(error.retryAfterSeconds ?? 0) <= Self.longestThrottlePause:
            let seconds = error.retryAfterSeconds ?? 0
            // The user finished the login; the service only asked to wait (HTTP 429, which lifts within
            // seconds): read again after the pause it asked for, as often as a profile not yet there.
            moveAuthentication(to: .login(flow, .readingProfile(operation: nil, attempt: attempt)), .throttled, .startTimer)
            return [.startTimer(.profileRead(flow.id), at: now.adding(max(.seconds(seconds), Self.profileReadPause)))]
        case .failure(let error) where error.saysSessionIsGone && flow.redirectAccepted && !flow.readsProfileByProvider:
            // The redirect proved the user signed in at the page, but the session's code died at the
            // service meanwhile (a session request that arrived after this login's replaced it): the
            // device's profile with the MVPD is what that sign-in saved. It is read instead, once.
            guard let mvpd = flow.mvpd else { return loginFailed(flow, error.summary, .failed) }
            var byProvider = flow
            byProvider.readsProfileByProvider = true
            let operation = nextOperation(.authentication)
            moveAuthentication(to: .login(byProvider, .readingProfile(operation: operation, attempt: attempt)), .sessionGone, .readProfile)
            return [.callBackend(operation, .profile(context(configuration), mvpd: mvpd.id))]
        case .failure(let error):
            return loginFailed(flow, error.summary, .failed)
        }
    }

    /// The longest pause a throttled profile read waits before reading again; a longer one ends the login.
    package static let longestThrottlePause = Duration.seconds(60)

    /// A login ended with a profile: authenticated, every waiter answered, waiting authorizations resumed.
    /// `endingDeadline`: the login still waited for its redirect, whose deadline timer ends here.
    mutating func signedIn(
        _ flow: LoginFlow, _ token: AuthenticationToken, _ configuration: RequestorConfiguration, endingDeadline: Bool = false
    ) -> [Action] {
        selectedProviderID = token.mvpdID
        var notice: [Action] = endingDeadline ? [.cancelTimer(.redirectDeadline(flow.id))] : []
        // Each row's actions a literal (a constant list, not one made per login).
        if token.source == .tempPass {
            moveAuthentication(
                to: .authenticated(token), .tempPass,
                endingDeadline ? [.cancelTimer, .status, .setAuthenticationStatus] : [.status, .setAuthenticationStatus])
            let minutes = token.expires.milliseconds(since: now) / 60_000
            let left = "Signed in with TempPass: \(minutes) minutes left."
            notice.append(.emit(.status(Notice.tempPassLogin.report(left)), answering: []))
        } else if token.source == .degraded {
            // Adobe's SDK: N010 when a degradation rule (AuthNAll) signed the user in without the MVPD.
            moveAuthentication(
                to: .authenticated(token), .degraded,
                endingDeadline ? [.cancelTimer, .status, .setAuthenticationStatus] : [.status, .setAuthenticationStatus])
            let words = "Signed in under a degradation rule: the TV provider was not asked."
            notice.append(.emit(.status(Notice.degradedLogin.report(words)), answering: []))
        } else {
            moveAuthentication(
                to: .authenticated(token), .profileMatchesFlow, endingDeadline ? [.cancelTimer, .setAuthenticationStatus] : [.setAuthenticationStatus])
        }
        notice += flowStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, takenFromStore: flow.startedElsewhere, token: token)
        notice += resumeAuthorizationsAfterLogin(token, configuration)
        return notice
    }

    /// The profile could not be read: LOGIN_FAILED, named for how the login went.
    private mutating func loginFailed(_ flow: LoginFlow, _ failure: String, _ condition: TransitionGuard) -> [Action] {
        let what =
            flow.mvpd?.isTempPass == true
            ? "The TempPass request" : flow.secrets == nil ? "The platform sign-in" : "Reading the login's profile"
        let notice = Notice.loginFailed.report(sentence("\(what) failed: \(failure)"))
        return endLogin(flow, code: ErrorCode.genericAuthentication, reason: sentence("The login failed: \(failure)"),
                notice: notice, condition: condition)
    }

    /// Ends a login without authentication: one `setAuthenticationStatus(0, code)` for all its
    /// waiters, then a `tokenRequestFailed` for every authorization that waited for it (with
    /// `waitingAuthorizationsCode`: "not authenticated" unless the reason is not the user's).
    mutating func endLogin(
        _ flow: LoginFlow, code: String, reason: String, alsoAnswering: [CallID] = [], notice: StatusReport? = nil,
        condition: TransitionGuard? = nil, waitingAuthorizationsCode: String = ErrorCode.userNotAuthenticated
    ) -> [Action] {
        var actions: [Action] = []
        var rowActions: [TransitionAction] = []
        if case .login(_, .awaitingRedirect) = authentication {
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
            rowActions.append(.cancelTimer)
        }
        if case .login(_, .awaitingSecondScreen) = authentication {
            actions += secondScreenTimers(flow).map(Action.cancelTimer)
            rowActions.append(.cancelTimer)
        }
        if case .login(_, .readingProfile(nil, _)) = authentication {
            actions.append(.cancelTimer(.profileRead(flow.id)))
            rowActions.append(.cancelTimer)
        }
        if case .login(_, .platformPicking) = authentication, case .configured(let configuration) = configuration {
            // The engine stops waiting for the picker, and the app closes it (cookbook: on cancel too).
            actions += [
                .dismissPlatformPicker(flow.id), .emit(.dismissTvProviderDialog(platformDialog(flow, configuration)), answering: []),
            ]
            rowActions.append(.dismissTvProviderDialog)
        }
        // What ended the login comes after the engine has closed what it opened, just before the status.
        if let notice {
            actions.append(.emit(.status(notice), answering: []))
            rowActions.append(.status)
        }
        rowActions.append(.setAuthenticationStatus)
        moveAuthentication(to: .unauthenticated, condition, rowActions)
        actions += flowStatus(0, code, answering: flow.waiters + alsoAnswering, takenFromStore: flow.startedElsewhere)
        let waiting = authorizations.filter { $0.phase == .waitingForAuthentication }
        authorizations.removeAll { $0.phase == .waitingForAuthentication }
        for request in waiting {
            recordAuthorization(from: .waitingForAuthentication, to: .idle, nil, .tokenRequestFailed)
            actions += authorizationFailed(request.resource, waitingAuthorizationsCode, reason, answering: request.waiters)
        }
        return actions
    }
}
