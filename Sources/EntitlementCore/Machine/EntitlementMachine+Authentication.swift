/// The authentication region's calls up to a chosen provider: checkAuthentication, getAuthentication
/// (which starts, joins or probes a login), setSelectedProvider and its cancellation. A login's later
/// steps are in `+Login`, following the shared store in `+SharedStorage`, logout in `+Logout`.
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
        case .login(let flow, let step) where showsAgain(flow, at: step):
            return showLoginAgain(joining: id, configuration)
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

    /// Whether `flow` at `step` has something the device may have lost and is shown again when it asks
    /// again (``showLoginAgain(joining:_:)``): the provider choice, a registration code, or a login page —
    /// one this node sent it to, or one another instance did (or one whose redirect it accepted).
    func showsAgain(_ flow: LoginFlow, at step: LoginStep) -> Bool {
        switch step {
        case .selectingProvider, .awaitingSecondScreen: true
        case .awaitingRedirect: flow.readsProfileFirst || (flow.completingElsewhere == nil && !(flow.url ?? "").isEmpty)
        default: false
        }
    }

    /// The device asks again — `getAuthentication`, or `getAuthorization` while signed out — during a
    /// login whose step ``showsAgain(_:at:)`` (nothing otherwise): what it showed may be lost (the app
    /// restarted, the web view closed, the request that carried it ended), so it is shown again. The provider
    /// dialog at once; the registration code (`status(REGCODE)`) after its profile is read — the user may have
    /// entered it on the phone since the last poll (``readCodeAgain(_:_:poll:joining:_:)``); the login page too —
    /// the user may have signed in there and only the redirect was lost, or its code may have died at the
    /// service (a session request this device sent earlier, given up on here, that arrived after this
    /// login's); a login another instance started (or this one before a restart), which may have died before
    /// the device heard of its page or while reading the profile, is read the same way (one completing
    /// elsewhere then waits for its outcome). `id`, a `getAuthentication`, joins the login's waiters; an
    /// authorization waits in its own region.
    mutating func showLoginAgain(joining id: CallID?, _ configuration: RequestorConfiguration) -> [Action] {
        guard case .login(var flow, let step) = authentication, showsAgain(flow, at: step) else { return [] }
        if let id { flow.waiters.append(id) }
        let join: [TransitionAction] = id == nil ? [] : [.join]
        let joined: [Action] = id.map { [.log(.joined($0, flow: "the running login"))] } ?? []
        switch step {
        case .selectingProvider:
            moveAuthentication(to: .login(flow, step), nil, join + [.displayProviderDialog])
            return joined + [.emit(.displayProviderDialog(configuration.mvpds), answering: [])]
        case .awaitingSecondScreen(let registration, let poll):
            return readCodeAgain(flow, registration, poll: poll, joining: id, configuration)
        default:
            return probeLogin(flow, configuration, joining: id, condition: flow.readsProfileFirst ? .startedElsewhere : .pageAskedAgain)
        }
    }

    /// Reads the profile of a login taken from storage (by its session code), unless a read is in flight:
    /// its answer signs the user in, or sends the device to the login's page again (``probeAnswered(_:_:_:)``).
    mutating func probeLogin(
        _ flow: LoginFlow, _ configuration: RequestorConfiguration, joining id: CallID?, condition: TransitionGuard = .startedElsewhere
    ) -> [Action] {
        var probing = flow
        var actions: [Action] = id.map { [.log(.joined($0, flow: "the running login"))] } ?? []
        guard probing.probe == nil, let code = probing.profileCode else {
            moveAuthentication(to: .login(probing, .awaitingRedirect), condition, id == nil ? [] : [.join])
            return actions
        }
        let operation = nextOperation(.authentication)
        probing.probe = operation
        moveAuthentication(to: .login(probing, .awaitingRedirect), condition, (id == nil ? [] : [.join]) + [.readProfile])
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

    /// Starts a login: the registration code another instance shows for the device, when the store holds
    /// one (its login is taken up here: the device asking this instance is shown the same code, not a new
    /// picker); else straight to the remembered provider; else the platform's picker when the device has one
    /// and the requestor has MVPDs that support it (cookbook D); else the provider dialog.
    mutating func startLogin(waiters: [CallID], data: [String: String], _ configuration: RequestorConfiguration)
        -> [Action]
    {
        if let foreign = foreignStore, let shown = takeUpRegistration(foreign.pendingRegistration, waiters: waiters, data: data, [], configuration, showing: .asked) {
            // This instance's view is now the store's: nothing to save over the code it took up.
            persisted = foreign
            foreignStore = nil
            selectedProviderID = foreign.pendingRegistration?.mvpdID
            return shown
        }
        var flow = LoginFlow(id: nextFlow(), mvpd: nil, secrets: nil, deadline: nil, waiters: waiters, data: data)
        if let remembered = selectedProviderID.flatMap(configuration.mvpd), !remembered.isTempPass {
            flow.mvpd = remembered
            moveAuthentication(to: .login(flow, .preparingLogin), .rememberedProvider, .drawSecrets)
            return []
        }
        if settings.platformSSO, configuration.mvpds.contains(where: \.enablePlatformServices) {
            let operation = nextOperation(.authentication)
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
            let operation = nextOperation(.authentication)
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
        return actions
    }

    /// Whoever runs the engine stopped waiting for the provider choice of login `flowID` (a host's time
    /// limit, a session closing): the login ends as the user's cancel ends it — its calls answered
    /// `PROVIDER_NOT_SELECTED_ERROR`, authorizations waiting for it failed — but nothing else does. The
    /// user's cancel ends every login of the device (``saveOverForeignStore()``); this one writes nothing
    /// over the store, so a login the device started through another instance (the registration code it
    /// shows there) goes on. Nothing when that picker no longer stands: the choice came, here or (as
    /// the store said before this input) elsewhere.
    mutating func providerChoiceAbandoned(_ flowID: FlowID) -> [Action] {
        guard loginChoosingProvider == flowID, let flow = currentLoginFlow else { return [] }
        return endLogin(flow, code: ErrorCode.providerNotSelected, reason: "No provider was chosen in time.")
    }

    /// `setSelectedProvider(nil)`: cancel whatever runs; always answered by `setAuthenticationStatus`.
    private mutating func cancelSelection(_ id: CallID, _ configuration: RequestorConfiguration) -> [Action] {
        if let logout = currentLogoutFlow { return finishLogout(logout, alsoAnswering: [id], condition: .cancelled) }
        if let flow = currentLoginFlow {
            selectedProviderID = nil
            // A cancel ends every login of the device: one made through the platform's picker on another
            // node is in no store, and a code another node reads may be replaced there by a newer one, so
            // the cancel marks as a logout does (``markLogout()``).
            if marksCancel { markLogout() }
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
}

extension Result {
    /// True for `.success`.
    var isSuccess: Bool {
        if case .success = self { return true }
        return false
    }
}
