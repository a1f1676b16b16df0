import EntitlementSupport

/// The authentication region: checkAuthentication, getAuthentication, provider selection,
/// the login flow's secrets, session, deadline and profile, and logout.
///
/// Every change of ``authentication`` goes through ``moveAuthentication(to:_:_:)``, which records
/// the transition row; a test holds those rows to the table the charts draw.
extension EntitlementMachine {
    // MARK: - Region accessors

    /// The running login flow, if any.
    var currentLoginFlow: LoginFlow? { authentication.loginFlow }

    /// The running logout, if any.
    var currentLogoutFlow: LogoutFlow? { authentication.logoutFlow }

    /// Adds `id` to the running login's waiters (a self-transition with `join`).
    mutating func joinLogin(_ id: CallID) {
        guard case .login(var flow, let step) = authentication else { return }
        flow.waiters.append(id)
        moveAuthentication(to: .login(flow, step), nil, .join)
    }

    /// The provider the user is logging in with, is authenticated with, or chose last.
    func currentProvider(_ configuration: RequestorConfiguration) -> MVPD? {
        if let mvpd = currentLoginFlow?.mvpd { return mvpd }
        if case .authenticated(let token) = authentication { return configuration.mvpd(token.mvpdID) }
        return selectedProviderID.flatMap(configuration.mvpd)
    }

    /// Drops an authentication whose expiry has passed (noticed before every call: the row's
    /// input is `authenticationExpired`).
    mutating func expireAuthenticationIfNeeded(_ configuration: RequestorConfiguration) -> [Action] {
        guard case .authenticated(let token) = authentication, !isUsable(token.expires) else { return [] }
        authorizationExpiries = [:]
        guard token.source == .tempPass else {
            moveAuthentication(to: .unauthenticated, nil, [], input: .authenticationExpired)
            return []
        }
        // TempPass over: say so (N111) and forget the pseudo-MVPD, so the next login shows the picker.
        moveAuthentication(to: .unauthenticated, .tempPass, [.status], input: .authenticationExpired)
        selectedProviderID = nil
        let notice = Notice.tempPassOver.report("The TempPass expired; sign in with a TV provider to keep watching.")
        return [.emit(.status(notice), answering: [])]
    }

    // MARK: - checkAuthentication / getAuthentication

    /// Local state only, no backend call: 1 with `""` or 0 with `USER_NOT_AUTHENTICATED_ERROR`.
    mutating func checkAuthentication(_ id: CallID) -> [Action] {
        recordCall(.localAnswer, .setAuthenticationStatus)
        if case .authenticated(let token) = authentication {
            return authenticationStatus(1, ErrorCode.userAuthenticated, answering: [id], token: token, cached: true)
        }
        return authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: [id])
    }

    mutating func getAuthentication(
        _ id: CallID, force: Bool, data: [String: String], _ configuration: RequestorConfiguration
    ) -> [Action] {
        switch authentication {
        case .authenticated(let token) where !force:
            moveAuthentication(to: authentication, .notForced, .setAuthenticationStatus)
            return authenticationStatus(1, ErrorCode.userAuthenticated, answering: [id], token: token, cached: true)
        case .authenticated:
            // Forced: the cached authentication is discarded and a new login runs.
            moveAuthentication(to: .unauthenticated, .forced)
            authorizationExpiries = [:]
            return startLogin(waiters: [id], data: data, configuration)
        case .unknown, .unauthenticated:
            return startLogin(waiters: [id], data: data, configuration)
        case .login(var flow, .awaitingRedirect) where flow.readsProfileFirst:
            // Another instance (or this one before a restart) sent the device to this login's page, and
            // may have died before the device heard of it — or the user signed in there and only the
            // redirect was lost — or it accepted the redirect and may have died reading the profile:
            // read the login's profile first, then sign in, or send the device to the page again (or,
            // for a login completing elsewhere, wait for its outcome).
            flow.waiters.append(id)
            return probeLogin(flow, configuration, joining: id)
        case .login:
            joinLogin(id)
            return [.log(.joined(id, flow: "the running login"))]
        case .logout(let flow, .loggingOut):
            return endLogoutForLogin(flow) + getAuthentication(id, force: force, data: data, configuration)
        case .logout(_, .preparingLogout), .logout(_, .requestingLogout):
            moveAuthentication(to: authentication, .logoutInProgress, .status)
            return refuse(id, .logoutInProgress)
        }
    }

    /// Reads the profile of a login taken from storage (by its session code), unless a read is in flight:
    /// its answer signs the user in, or sends the device to the login's page again (``probeAnswered(_:_:_:)``).
    mutating func probeLogin(_ flow: LoginFlow, _ configuration: RequestorConfiguration, joining id: CallID?) -> [Action] {
        var probing = flow
        var actions: [Action] = id.map { [.log(.joined($0, flow: "the running login"))] } ?? []
        guard probing.probe == nil, let code = probing.profileCode else {
            moveAuthentication(to: .login(probing, .awaitingRedirect), .startedElsewhere, id == nil ? [] : [.join])
            return actions
        }
        let operation = nextOperation()
        probing.probe = operation
        moveAuthentication(to: .login(probing, .awaitingRedirect), .startedElsewhere, (id == nil ? [] : [.join]) + [.readProfile])
        actions.append(.callBackend(operation, .profileByCode(context(configuration), code: code)))
        return actions
    }

    /// The profile read of a login taken from storage answered: the user signed in at its page already
    /// (only the redirect was lost), or has not yet (or the read failed) — then the device is sent to the
    /// page again.
    mutating func probeAnswered(
        _ flow: LoginFlow, _ result: Result<BackendResponse, BackendError>, _ configuration: RequestorConfiguration
    ) -> [Action] {
        var waiting = flow
        waiting.probe = nil
        if case .success(.profiles(let profiles)) = result, let mvpd = flow.mvpd, let token = bestProfile(profiles, configuration, mvpd: mvpd.id) {
            return signedIn(waiting, token, configuration, endingDeadline: true)
        }
        if flow.completingElsewhere != nil {
            // Its redirect was accepted elsewhere, so its page is used up: wait for the outcome there.
            moveAuthentication(to: .login(waiting, .awaitingRedirect), .completingElsewhere)
            return []
        }
        if case .failure(let error) = result, error.saysSessionIsGone, let mvpd = flow.mvpd {
            // The code died at the service (a session request that arrived late replaced it, or it ran
            // out): sending the device to its page would fail there, so the login starts a new session.
            let fresh = LoginFlow(id: nextFlow(), mvpd: mvpd, secrets: nil, deadline: nil, waiters: flow.waiters, data: flow.data)
            moveAuthentication(to: .login(fresh, .preparingLogin), .sessionGone, .cancelTimer, .drawSecrets)
            requestSecrets(for: fresh.id)
            return [.cancelTimer(.redirectDeadline(flow.id))]
        }
        moveAuthentication(to: .login(waiting, .awaitingRedirect), .profileNotYet, .navigateToUrl)
        return [.emit(.navigateToUrl(flow.url ?? ""), answering: [])]
    }

    /// A login call came while a logout waited for the MVPD's logout redirect: the user moved on (the
    /// page was abandoned, or its node died), and the local tokens are already gone, so the logout ends
    /// as done — its calls answered `setAuthenticationStatus(0)`, its pending redirect out of the store —
    /// and the call is then handled as on a signed-out device. (Refusing it would lock the device out of
    /// logging in, on every node of a fleet, until the logout's deadline.)
    mutating func endLogoutForLogin(_ flow: LogoutFlow) -> [Action] {
        finishLogout(flow, alsoAnswering: [], condition: .loginRequested)
    }

    /// Starts a login: straight to the remembered provider; else the platform's picker when the
    /// device has one and the requestor has MVPDs that support it (cookbook D); else the provider dialog.
    mutating func startLogin(waiters: [CallID], data: [String: String], _ configuration: RequestorConfiguration)
        -> [Action]
    {
        var flow = LoginFlow(id: nextFlow(), mvpd: nil, secrets: nil, deadline: nil, waiters: waiters, data: data)
        if let remembered = selectedProviderID.flatMap(configuration.mvpd), !remembered.isTempPass {
            flow.mvpd = remembered
            moveAuthentication(to: .login(flow, .preparingLogin), .rememberedProvider, .drawSecrets)
            requestSecrets(for: flow.id)
            return []
        }
        if settings.platformSSO, configuration.mvpds.contains(where: \.enablePlatformServices) {
            let operation = nextOperation()
            moveAuthentication(to: .login(flow, .requestingPartnerSession(operation: operation)), .platformProviders, .requestPartnerSession)
            return [.callBackend(operation, partnerSessionRequest(configuration))]
        }
        moveAuthentication(to: .login(flow, .selectingProvider), .noRememberedProvider, .displayProviderDialog)
        return [.emit(.displayProviderDialog(configuration.mvpds), answering: [])]
    }

    // MARK: - setSelectedProvider

    mutating func setSelectedProvider(_ id: CallID, _ providerID: String?, _ configuration: RequestorConfiguration)
        -> [Action]
    {
        guard let providerID else { return cancelSelection(id, configuration) }
        guard let mvpd = configuration.mvpd(providerID) else {
            recordCall(.unknownProvider, .status)
            return refuse(id, .unknownProvider(providerID))
        }
        var running: LoginFlow?
        var actions: [Action] = []
        var cancelsTimer = false
        switch authentication {
        case .authenticated:
            moveAuthentication(to: authentication, .authenticated, .status)
            return refuse(id, .alreadyAuthenticated)
        case .login(_, .readingProfile):
            moveAuthentication(to: authentication, .profileReadInProgress, .status)
            return refuse(id, .profileReadInProgress)
        case .logout(let flow, .loggingOut):
            return endLogoutForLogin(flow) + setSelectedProvider(id, providerID, configuration)
        case .logout(_, .preparingLogout), .logout(_, .requestingLogout):
            moveAuthentication(to: authentication, .logoutInProgress, .status)
            return refuse(id, .logoutInProgress)
        case .unknown, .unauthenticated:
            running = nil
        case .login(let flow, .selectingProvider), .login(let flow, .preparingLogin), .login(let flow, .creatingSession),
            .login(let flow, .requestingPartnerSession):
            // A session still being created (or the partner's) is abandoned: its late answer is ignored.
            running = flow
        case .login(let flow, .awaitingSecondScreen):
            // Chosen again on the TV: the old code is no longer polled.
            running = flow
            cancelsTimer = true
            actions += secondScreenTimers(flow).map(Action.cancelTimer)
        case .login(let flow, .platformPicking):
            // The app chose in its own UI: the platform's picker is no longer waited for.
            running = flow
            actions += [
                .dismissPlatformPicker(flow.id), .emit(.dismissTvProviderDialog(platformDialog(flow, configuration)), answering: []),
            ]
        case .login(let flow, .awaitingRedirect):
            // The user went back and chose again: the old state and deadline die with the old attempt.
            running = flow
            cancelsTimer = true
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
        }
        // Every attempt gets a new flow id, so anything still addressed to the old attempt is late.
        let flow = LoginFlow(
            id: nextFlow(), mvpd: mvpd, secrets: nil, deadline: nil, waiters: (running?.waiters ?? []) + [id],
            data: running?.data ?? [:])
        selectedProviderID = mvpd.id
        let tracking = [mvpd.id, settings.deviceType, settings.clientType, settings.operatingSystem]
        if mvpd.isTempPass {
            // No login page and no state to bind: the session answers `authorize` (temporary) at once.
            var rowActions: [TransitionAction] = cancelsTimer ? [.cancelTimer] : []
            if case .login(_, .platformPicking) = authentication { rowActions.append(.dismissTvProviderDialog) }
            let operation = nextOperation()
            moveAuthentication(
                to: .login(flow, .creatingSession(operation: operation)), .tempPass, rowActions + [.trackSelection, .createSession])
            return actions + [
                .emit(.sendTrackingData(.mvpdSelection, tracking), answering: []),
                .callBackend(
                    operation,
                    .createSession(
                        context(configuration), mvpd: mvpd.id, domainName: settings.domainName,
                        redirectURL: settings.redirectURL)),
            ]
        }
        if cancelsTimer {
            moveAuthentication(to: .login(flow, .preparingLogin), nil, .cancelTimer, .trackSelection, .drawSecrets)
        } else if case .login(_, .platformPicking) = authentication {
            moveAuthentication(to: .login(flow, .preparingLogin), nil, .dismissTvProviderDialog, .trackSelection, .drawSecrets)
        } else {
            moveAuthentication(to: .login(flow, .preparingLogin), nil, .trackSelection, .drawSecrets)
        }
        actions.append(.emit(.sendTrackingData(.mvpdSelection, tracking), answering: []))
        requestSecrets(for: flow.id)
        return actions
    }

    /// `setSelectedProvider(nil)`: cancel whatever runs; always answered by `setAuthenticationStatus`.
    private mutating func cancelSelection(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        if let logout = currentLogoutFlow { return finishLogout(logout, alsoAnswering: [id], condition: .cancelled) }
        if let flow = currentLoginFlow {
            selectedProviderID = nil
            return endLogin(flow, code: ErrorCode.providerNotSelected, reason: "The user cancelled the login.",
                    alsoAnswering: [id], condition: .cancelled)
        }
        var actions: [Action] = []
        if case .authenticated = authentication {
            // Signs this requestor out locally (no web logout), as AccessEnabler does.
            authorizationExpiries = [:]
            actions += abortRequests(code: ErrorCode.userNotAuthenticated, description: "The user signed out.")
        }
        moveAuthentication(to: .unauthenticated, .cancelled, .setAuthenticationStatus)
        selectedProviderID = nil
        return actions + authenticationStatus(0, ErrorCode.providerNotSelected, answering: [id])
    }

    // MARK: - Flow secrets, session, deadline, profile

    /// The redirect URL sent in a session or logout request: the app's, with the flow's `state`
    /// (and the MVPD) added, so the redirect is bound to this flow.
    func redirectURL(state: String, mvpdID: String?) -> String {
        PercentEncoding.url(settings.redirectURL, query: [("state", state)] + (mvpdID.map { [("mvpd", $0)] } ?? []))
    }

    mutating func flowSecretsDrawn(_ flowID: FlowID, _ secrets: FlowSecrets) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [.log(.lateSecretsIgnored(flowID))] }
        switch authentication {
        case .login(var flow, .preparingLogin) where flow.id == flowID:
            guard let mvpd = flow.mvpd else { return [.log(.lateSecretsIgnored(flowID))] }
            flow.secrets = secrets
            let operation = nextOperation()
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
            let operation = nextOperation()
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
            let operation = nextOperation()
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
            let operation = nextOperation()
            moveAuthentication(to: .login(resuming, .creatingSession(operation: operation)), .missingParameters, .resumeSession)
            return [
                .callBackend(
                    operation,
                    .resumeSession(
                        context(configuration), code: code, mvpd: mvpd.id, domainName: settings.domainName,
                        redirectURL: redirectURL(state: secrets.state, mvpdID: mvpd.id)))
            ]
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
    public static let profileReads = 4
    /// The pause between two reads of a profile that is not there yet.
    public static let profileReadPause = Duration.seconds(3)

    mutating func timerFired(_ timer: TimerID) -> [Action] {
        switch (timer, authentication) {
        case (.registrationPoll(let flowID), .login(let flow, .awaitingSecondScreen(let code, nil))) where flow.id == flowID:
            return pollRegistration(flow, code)
        case (.registrationExpiry(let flowID), .login(let flow, .awaitingSecondScreen)) where flow.id == flowID:
            let notice = Notice.registrationCodeExpired.report("The registration code expired before it was used.")
            return endLogin(flow, code: ErrorCode.genericAuthentication, reason: "The registration code expired.", notice: notice,
                    condition: .codeExpired)
        case (.profileRead(let flowID), .login(let flow, .readingProfile(nil, let attempt))) where flow.id == flowID:
            guard case .configured(let configuration) = configuration, let code = flow.code else { return [] }
            let operation = nextOperation()
            moveAuthentication(to: .login(flow, .readingProfile(operation: operation, attempt: attempt + 1)), .pollDue, .readProfile)
            return [.callBackend(operation, .profileByCode(context(configuration), code: code))]
        case (.redirectDeadline(let flowID), .login(let flow, .awaitingRedirect)) where flow.id == flowID:
            return expireLogin(flow)
        case (.redirectDeadline(let flowID), .logout(let flow, .loggingOut)) where flow.id == flowID:
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
        case .failure(let error):
            return loginFailed(flow, error.summary, .failed)
        }
    }

    /// The longest pause a throttled profile read waits before reading again; a longer one ends the login.
    public static let longestThrottlePause = Duration.seconds(60)

    /// A login ended with a profile: authenticated, every waiter answered, waiting authorizations resumed.
    /// `endingDeadline`: the login still waited for its redirect, whose deadline timer ends here.
    mutating func signedIn(
        _ flow: LoginFlow, _ token: AuthenticationToken, _ configuration: RequestorConfiguration, endingDeadline: Bool = false
    ) -> [Action] {
        selectedProviderID = token.mvpdID
        var notice: [Action] = endingDeadline ? [.cancelTimer(.redirectDeadline(flow.id))] : []
        let deadline: [TransitionAction] = endingDeadline ? [.cancelTimer] : []
        if token.source == .tempPass {
            moveAuthentication(to: .authenticated(token), .tempPass, deadline + [.status, .setAuthenticationStatus])
            let minutes = token.expires.milliseconds(since: now) / 60_000
            let left = "Signed in with TempPass: \(minutes) minutes left."
            notice.append(.emit(.status(Notice.tempPassLogin.report(left)), answering: []))
        } else if token.source == .degraded {
            // Adobe's SDK: N010 when a degradation rule (AuthNAll) signed the user in without the MVPD.
            moveAuthentication(to: .authenticated(token), .degraded, deadline + [.status, .setAuthenticationStatus])
            let words = "Signed in under a degradation rule: the TV provider was not asked."
            notice.append(.emit(.status(Notice.degradedLogin.report(words)), answering: []))
        } else {
            moveAuthentication(to: .authenticated(token), .profileMatchesFlow, deadline + [.setAuthenticationStatus])
        }
        return notice + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
            + resumeAuthorizationsAfterLogin(token, configuration)
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
        actions += authenticationStatus(0, code, answering: flow.waiters + alsoAnswering)
        let waiting = authorizations.filter { $0.phase == .waitingForAuthentication }
        authorizations.removeAll { $0.phase == .waitingForAuthentication }
        for request in waiting {
            recordAuthorization(from: .waitingForAuthentication, to: .idle, nil, .tokenRequestFailed)
            actions += authorizationFailed(request.resource, waitingAuthorizationsCode, reason, answering: request.waiters)
        }
        return actions
    }

    // MARK: - Shared storage

    /// Whether storage holds something else than this machine last saved or read (another
    /// instance logged in or out, started or took a login, cached an authorization): the engine
    /// then feeds ``Input/storageChanged(_:)``. The engine asks only when the stored version changed.
    public func differs(from stored: StoredTokens) -> Bool {
        guard case .configured = configuration else { return false }
        return stored != persisted
    }

    /// Resumes a login another instance (or this one before a restart) started: its state,
    /// session code, MVPD and deadline come from storage; nobody here waits for it yet.
    mutating func resumePendingLogin(_ pending: PendingLogin?, _ configuration: RequestorConfiguration) -> Action? {
        guard let pending, pending.deadline > now, let mvpd = configuration.mvpd(pending.mvpdID) else { return nil }
        let flow = LoginFlow(id: nextFlow(), mvpd: nil, secrets: nil, deadline: nil, waiters: [], data: [:]).adopting(pending, mvpd: mvpd)
        moveAuthentication(to: .login(flow, .awaitingRedirect), .pendingLogin, .startTimer)
        selectedProviderID = mvpd.id
        return .startTimer(.redirectDeadline(flow.id), at: pending.deadline)
    }

    /// A login this instance waited for ended elsewhere, and the store now holds a logout waiting for its
    /// redirect: the login's calls are answered (not authenticated), and the logout is waited for here too.
    mutating func resumePendingLogout(_ pending: PendingLogout?, ending flow: LoginFlow) -> [Action]? {
        guard let pending, pending.deadline > now else { return nil }
        let ended = endLogin(
            flow, code: ErrorCode.userNotAuthenticated, reason: "The login ended on another instance, which is logging out.",
            condition: .pendingLogout)
        return ended + (resumePendingLogout(pending).map { [$0] } ?? [])
    }

    /// A logout another instance started (or this one before a restart) is waiting for its redirect in
    /// storage: wait for it here too, so the redirect completes it on whichever instance it reaches.
    mutating func resumePendingLogout(_ pending: PendingLogout?) -> Action? {
        guard let pending, pending.deadline > now else { return nil }
        let flow = LogoutFlow(
            id: nextFlow(), secrets: FlowSecrets(state: pending.state), deadline: pending.deadline, mvpdID: pending.mvpdID, waiters: [])
        moveAuthentication(to: .logout(flow, .loggingOut), .pendingLogout, .startTimer)
        selectedProviderID = nil
        return .startTimer(.redirectDeadline(flow.id), at: pending.deadline)
    }

    /// Another instance sharing the storage changed the authentication: adopt it where this
    /// instance is idle, or where it was waiting for a redirect that the other one received.
    mutating func storageChanged(_ stored: StoredTokens) -> [Action] {
        guard case .configured(let configuration) = configuration else { return [] }
        let mine = storedTokens
        persisted = stored
        let token = usableStoredToken(stored, configuration)
        func adopt() {
            authorizationExpiries = [:]
            selectedProviderID = stored.selectedProvider.flatMap { configuration.mvpd($0) == nil ? nil : $0 }
        }
        switch authentication {
        case .unauthenticated:
            if let token {
                moveAuthentication(to: .authenticated(token), .validStoredToken)
            } else if let resumed = resumePendingLogin(stored.pendingLogin, configuration) ?? resumePendingLogout(stored.pendingLogout) {
                return [resumed]
            }
            adopt()  // the provider chosen elsewhere too: it is the user's
            // Following the store writes nothing: what this instance does not take up (another
            // instance's second-screen code, which it polls) stays in the store.
            persisted = storedTokens
            return []
        case .authenticated(let current):
            if let token {
                guard token != current else { return [] }
                moveAuthentication(to: .authenticated(token), .validStoredToken)
            } else if let resumed = resumePendingLogout(stored.pendingLogout) {
                // Logged out elsewhere, waiting for the MVPD's logout redirect: it may come here.
                authorizationExpiries = [:]
                return [resumed]
            } else if let resumed = resumePendingLogin(stored.pendingLogin, configuration) {
                // Signed out and logging in again elsewhere (this instance missed the steps between):
                // the login's redirect may come here.
                authorizationExpiries = [:]
                selectedProviderID = stored.selectedProvider.flatMap { configuration.mvpd($0) == nil ? nil : $0 }
                return [resumed]
            } else {
                moveAuthentication(to: .unauthenticated, .noValidStoredToken)
            }
            adopt()
            return []
        case .login(let flow, .selectingProvider), .login(let flow, .platformPicking), .login(let flow, .requestingPartnerSession):
            // The user may answer on another node: a login finished there, or started there (the
            // device's choice reached that node), ends this picker.
            var dismiss: [Action] = []
            var rowActions: [TransitionAction] = []
            if case .login(_, .platformPicking) = authentication {
                dismiss = [.dismissPlatformPicker(flow.id), .emit(.dismissTvProviderDialog(platformDialog(flow, configuration)), answering: [])]
                rowActions = [.dismissTvProviderDialog]
            }
            if let token {
                moveAuthentication(to: .authenticated(token), .validStoredToken, rowActions + [.setAuthenticationStatus])
                adopt()
                return dismiss + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                    + resumeAuthorizationsAfterLogin(token, configuration)
            }
            if case .login(_, .selectingProvider) = authentication, let logout = resumePendingLogout(stored.pendingLogout, ending: flow) {
                // Meanwhile the user signed in elsewhere and is logging out there: the picker's login ends (its
                // calls answered: not authenticated) and the logout's redirect is waited for here too.
                adopt()
                return logout
            }
            guard let pending = stored.pendingLogin, pending.deadline > now, let mvpd = configuration.mvpd(pending.mvpdID) else {
                persisted = mine
                return []
            }
            let waiting = flow.adopting(pending, mvpd: mvpd)
            moveAuthentication(to: .login(waiting, .awaitingRedirect), .pendingLogin, rowActions + [.startTimer])
            adopt()
            return dismiss + [.startTimer(.redirectDeadline(waiting.id), at: pending.deadline)]
        case .logout(var flow, .loggingOut):
            if let pending = stored.pendingLogout, token == nil {
                guard pending.state != flow.secrets?.state, pending.deadline > now else { return [] }
                // Another instance started the logout again: wait for that one's redirect.
                flow.secrets = FlowSecrets(state: pending.state)
                flow.deadline = pending.deadline
                flow.mvpdID = pending.mvpdID
                moveAuthentication(to: .logout(flow, .loggingOut), .pendingLogout, .cancelTimer, .startTimer)
                return [.cancelTimer(.redirectDeadline(flow.id)), .startTimer(.redirectDeadline(flow.id), at: pending.deadline)]
            }
            // Another instance took the logout's redirect (or the user signed in there): the logout is done.
            var actions = finishLogout(flow, alsoAnswering: [], condition: .pendingLogoutTaken)
            if let token {
                moveAuthentication(to: .authenticated(token), .validStoredToken)
                actions += resumeAuthorizationsAfterLogin(token, configuration)
            } else if let resumed = resumePendingLogin(stored.pendingLogin, configuration) {
                actions.append(resumed)
            }
            adopt()
            return actions
        case .login(var flow, .awaitingRedirect):
            guard let token else {
                // Whatever else this instance follows, the login stands as storage says.
                adopt()
                if let pending = stored.pendingLogin, pending.deadline > now, let mvpd = configuration.mvpd(pending.mvpdID) {
                    if pending.completing {
                        guard flow.completingElsewhere != pending else { return [] }
                        // Another instance accepted the redirect and reads the profile: this one waits for
                        // the outcome in storage, without the secrets, so the same redirect can never
                        // complete the login here too.
                        flow = flow.adopting(pending, mvpd: mvpd)
                        moveAuthentication(to: .login(flow, .awaitingRedirect), .pendingLoginTaken)
                        return []
                    }
                    if flow.completingElsewhere == nil, pending.state == flow.secrets?.state { return [] }
                    // Another instance restarted the login: wait for that one, with its secrets and deadline.
                    flow = flow.adopting(pending, mvpd: mvpd)
                    moveAuthentication(to: .login(flow, .awaitingRedirect), .pendingLogin, .cancelTimer, .startTimer)
                    return [.cancelTimer(.redirectDeadline(flow.id)), .startTimer(.redirectDeadline(flow.id), at: pending.deadline)]
                }
                if let logout = resumePendingLogout(stored.pendingLogout, ending: flow) {
                    // The login ended elsewhere and the user is logging out there: so is this instance.
                    return logout
                }
                if let deadline = flow.deadline, now >= deadline {
                    // Another instance's copy of the deadline ended the login first: it expired here too.
                    return expireLogin(flow, condition: .deadlinePassed)
                }
                // Neither a login nor an authentication is stored: the login ended on another instance
                // without signing in (cancelled, refused, or signed in and out again before this one looked).
                return endLogin(
                    flow, code: ErrorCode.userNotAuthenticated, reason: "The login ended on another instance without signing in.",
                    condition: .loginEndedElsewhere)
            }
            moveAuthentication(to: .authenticated(token), .validStoredToken, .cancelTimer, .setAuthenticationStatus)
            adopt()
            return [.cancelTimer(.redirectDeadline(flow.id))]
                + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        case .login(let flow, .awaitingSecondScreen):
            // The user signed in elsewhere (the code of a second-screen login another instance polls, a
            // login finished there): this instance stops polling and answers its calls signed in.
            guard let token else {
                persisted = mine
                return []
            }
            moveAuthentication(to: .authenticated(token), .validStoredToken, .cancelTimer, .setAuthenticationStatus)
            adopt()
            return secondScreenTimers(flow).map(Action.cancelTimer)
                + authenticationStatus(1, ErrorCode.userAuthenticated, answering: flow.waiters, token: token)
                + resumeAuthorizationsAfterLogin(token, configuration)
        default:
            // In the middle of its own flow this instance keeps its view until the flow ends.
            persisted = mine
            return []
        }
    }

    // MARK: - Logout

    /// Clears local tokens first, then asks the service to log out (`GET logout/{mvpd}`); an
    /// interactive answer sends the MVPD's logout URL and its redirect (or the deadline) completes
    /// the logout; any other answer completes it at once. With no authentication there is nothing
    /// to log out on the service, and the logout completes at once.
    mutating func logout(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        var actions: [Action] = []
        // The MVPD to log out of on the service: the authentication's, or that of a login whose
        // session exists (its profile may already be saved there).
        var mvpdID: String?
        if case .authenticated(let token) = authentication { mvpdID = token.mvpdID }
        if let flow = currentLoginFlow, flow.code != nil { mvpdID = flow.mvpd?.id }
        let platformSession = if case .authenticated(let token) = authentication { token.source == .platformSSO } else { false }
        switch authentication {
        case .logout(var flow, let step):
            flow.waiters.append(id)
            moveAuthentication(to: .logout(flow, step), nil, .join)
            return [.log(.joined(id, flow: "the running logout"))]
        case .login(let flow, _):
            actions += endLogin(flow, code: ErrorCode.userNotAuthenticated, reason: "The login was abandoned by logout.")
        case .unknown, .unauthenticated, .authenticated:
            break
        }
        actions += abortRequests(code: ErrorCode.userNotAuthenticated, description: "The user logged out.")
        authorizationExpiries = [:]
        selectedProviderID = nil
        guard let mvpdID else {
            moveAuthentication(to: .unauthenticated, .notAuthenticated, .setAuthenticationStatus)
            return actions + authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: [id])
        }
        let flow = LogoutFlow(id: nextFlow(), secrets: nil, deadline: nil, mvpdID: mvpdID, waiters: [id])
        if platformSession {
            // Cookbook I: this app is signed out, the platform is not; say so (VSA203).
            moveAuthentication(to: .logout(flow, .preparingLogout), .platformSession, .status, .drawSecrets)
            let notice = Notice.platformLogout.report("Signed out of this app only: the device is still signed in to the TV provider; "
                    + "sign out in the device settings too, or this app signs in again at its next setRequestor.")
            actions.append(.emit(.status(notice), answering: []))
            requestSecrets(for: flow.id)
            return actions
        }
        moveAuthentication(to: .logout(flow, .preparingLogout), nil, .drawSecrets)
        requestSecrets(for: flow.id)
        return actions
    }

    /// The service logged out: follow an interactive MVPD logout when the device has a web view,
    /// else the logout is complete (`complete`, `invalid`, `partner_logout`, or no web view). A
    /// failed request completes it too: the local tokens are already gone, and the app is told.
    mutating func logoutAnswered(_ flow: LogoutFlow, _ result: Result<BackendResponse, BackendError>) -> [Action] {
        switch result {
        case .success(.logouts(let logouts)):
            let step = flow.mvpdID.flatMap { logouts[$0] } ?? logouts.values.first
            guard let step, step.actionName == .logout, step.actionType == .interactive, let url = step.url, !url.isEmpty,
                settings.secondScreen == nil
            else { return finishLogout(flow, alsoAnswering: [], condition: .noInteraction) }
            var waiting = flow
            let deadline = now.adding(settings.redirectTimeout)
            waiting.deadline = deadline
            moveAuthentication(to: .logout(waiting, .loggingOut), .interactive, .startTimer, .navigateToUrl)
            return [.startTimer(.redirectDeadline(flow.id), at: deadline), .emit(.navigateToUrl(url), answering: [])]
        case .success:
            return logoutFailed(flow, "malformed backend response: not a logout", .malformedAnswer)
        case .failure(let error):
            return logoutFailed(flow, error.summary, .failed)
        }
    }

    private mutating func logoutFailed(_ flow: LogoutFlow, _ why: String, _ condition: TransitionGuard) -> [Action] {
        let notice = Notice.logoutFailed.report("The service could not log out (\(why)); local tokens were already cleared.")
        return finishLogout(flow, alsoAnswering: [], notice: notice, condition: condition)
    }

    /// Completes a logout: `setAuthenticationStatus(0, USER_NOT_AUTHENTICATED_ERROR)` for all its
    /// waiters, after `notice` (why it ended without the provider) when there is one.
    mutating func finishLogout(
        _ flow: LogoutFlow, alsoAnswering: [CallID], notice: StatusReport? = nil, condition: TransitionGuard? = nil
    ) -> [Action] {
        var actions: [Action] = []
        var rowActions: [TransitionAction] = []
        if case .logout(_, .loggingOut) = authentication {
            actions.append(.cancelTimer(.redirectDeadline(flow.id)))
            rowActions.append(.cancelTimer)
        }
        if let notice {
            actions.append(.emit(.status(notice), answering: []))
            rowActions.append(.status)
        }
        rowActions.append(.setAuthenticationStatus)
        moveAuthentication(to: .unauthenticated, condition, rowActions)
        return actions + authenticationStatus(0, ErrorCode.userNotAuthenticated, answering: flow.waiters + alsoAnswering)
    }
}

extension Result {
    /// True for `.success`.
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
