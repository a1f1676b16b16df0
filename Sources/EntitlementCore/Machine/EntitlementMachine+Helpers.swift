import EntitlementSupport

/// What every region uses: ids, time, the save and the queue's hand-back, refusals, tracking data and
/// the common ends of flows.
extension EntitlementMachine {

    /// A new operation for the region `owner`: its answer goes straight back there.
    mutating func nextOperation(_ owner: OperationID.Owner) -> OperationID {
        held.value.lastOperation += 1
        return OperationID(held.value.lastOperation, owner: owner)
    }

    mutating func nextFlow() -> FlowID {
        held.value.lastFlow += 1
        return FlowID(held.value.lastFlow)
    }

    /// Whether a stored or cached token expiring at `expires` still counts: unexpired by more than
    /// the clock-skew leeway.
    func isUsable(_ expires: Timestamp) -> Bool {
        Saturating.subtract(expires.milliseconds, settings.expiryLeeway.milliseconds) > now.milliseconds
    }

    /// The request context for the configured requestor.
    func context(_ configuration: RequestorConfiguration) -> RequestContext {
        RequestContext(requestorID: configuration.requestorID, deviceID: deviceID, options: options)
    }

    /// Drops expired decision windows and pre-authorization decisions, at most once per
    /// ``cacheSweepInterval``.
    mutating func evictExpiredCacheEntries() {
        nextCacheSweep = now.adding(Self.cacheSweepInterval)
        if authorizationExpiries.contains(where: { !isUsable($0.value) }) {
            authorizationExpiries = authorizationExpiries.filter { isUsable($0.value) }
        }
        if preauthorizationCache.contains(where: { $0.value.expires <= now }) {
            preauthorizationCache = preauthorizationCache.filter { $0.value.expires > now }
        }
    }

    /// The save the last input asked for failed: storage still holds what it held, so the tokens
    /// count as unsaved (the next input saves them again) and the app is told.
    mutating func storageWriteFailed(_ reason: String) -> [Action] {
        guard let before = persistedBeforeSave?.value else { return [] }
        persisted = before
        persistedBeforeSave = nil
        stayConfiguration(nil, .status)
        let notice = Notice.storageWriteFailed.report("The tokens could not be saved (\(Redactor.redact(String(reason.prefix(200))))); they are kept in memory and saved again after the next call.")
        return [.emit(.status(notice), answering: [])]
    }

    /// The undo of a save over nothing: one box for every machine (it is never written).
    static let nothingSaved = Boxed(StoredTokens.empty)

    /// Counts `tokens` (the current ``storedTokens``) as stored for `configuration`'s requestor and
    /// returns the save that stores them (a step's `MachineStep.save`); `Input.storageWriteFailed(_:)`
    /// takes that back.
    mutating func persist(_ tokens: StoredTokens, _ configuration: RequestorConfiguration) -> MachineStep.Save {
        if foreignStore != nil { foreignStore = nil }  // this save goes over whatever storage held
        persistedBeforeSave = persistedBox ?? Self.nothingSaved
        // One box for the snapshot and the save (``persisted`` keeps no box for empty tokens).
        let saved = Boxed(tokens)
        persistedBox = tokens == .empty ? nil : saved
        return MachineStep.Save(box: saved, requestorID: configuration.requestorID)
    }

    /// `text` ending with exactly one period (a backend's message may bring its own).
    func sentence(_ text: String) -> String { text.hasSuffix(".") ? text : text + "." }

    /// Answers a refused call with one `status` and changes nothing.
    func refuse(_ id: CallID, _ refusal: CallRefusal) -> [Action] { [.emit(.status(refusal.report), answering: [id])] }

    /// An anonymised user id for tracking data (never the id itself): hashed once per user id, not on
    /// every answer.
    mutating func trackingGUID(_ token: AuthenticationToken?) -> String {
        guard let userID = token?.userID else { return "" }
        if let known = lastTrackingGUID?.value, known.userID == userID { return known.guid }
        let guid = Hex.encode(Array(SHA256.hash(userID).prefix(16)))
        lastTrackingGUID = Boxed((userID, guid))
        return guid
    }

    /// Tracking data followed by `setAuthenticationStatus`: every authentication answer goes through here.
    mutating func authenticationStatus(
        _ status: Int, _ code: String, answering: [CallID], token: AuthenticationToken? = nil, cached: Bool = false
    ) -> [Action] {
        // The MVPD, the user's GUID and "cached" are sent only on success (Adobe's tracking events:
        // fields 1–3 "if successful"); a failure leaves them empty.
        let known = status == 1 ? token : nil
        let data = [
            status == 1 ? "true" : "false", known?.mvpdID ?? "", trackingGUID(known), status == 1 ? (cached ? "true" : "false") : "",
            settings.deviceType, settings.clientType, settings.operatingSystem,
        ]
        return [
            .emit(.sendTrackingData(.authenticationDetection, data), answering: []),
            .emit(.setAuthenticationStatus(status: status, errorCode: code), answering: answering),
        ]
    }

    /// A login's or logout's one `setAuthenticationStatus` (with its tracking data), answering `calls`:
    /// nothing for a flow this instance took from the store (another node started it) when no call here
    /// takes part — none answered, no authorization waiting for the login: a node tells the device
    /// nothing about calls it does not hold. A flow started here reports its status even with no call
    /// waiting (a login `getAuthorization` started: the app closes its web view on it).
    mutating func flowStatus(
        _ status: Int, _ code: String, answering calls: [CallID], takenFromStore: Bool, token: AuthenticationToken? = nil
    ) -> [Action] {
        let callsHere = !calls.isEmpty || authorizations.contains { $0.phase == .waitingForAuthentication }
        guard !takenFromStore || callsHere else { return [] }
        return authenticationStatus(status, code, answering: calls, token: token)
    }

    /// Tracking data for one authorization answer.
    mutating func authorizationTracking(
        success: Bool, token: AuthenticationToken?, cached: Bool, error: String, details: String
    ) -> Action {
        // The MVPD, the user's GUID and "cached" are sent only on success (Adobe's tracking events).
        let known = success ? token : nil
        let data = [
            success ? "true" : "false", known?.mvpdID ?? "", trackingGUID(known), success ? (cached ? "true" : "false") : "",
            error, details, settings.deviceType, settings.clientType, settings.operatingSystem,
        ]
        return .emit(.sendTrackingData(.authorizationDetection, data), answering: [])
    }

    /// Tracking data followed by one `tokenRequestFailed` per waiting call.
    mutating func authorizationFailed(_ resource: String, _ code: String, _ description: String, answering waiters: [CallID])
        -> [Action]
    {
        [authorizationTracking(success: false, token: nil, cached: false, error: code, details: description)]
            + waiters.map {
                .emit(.tokenRequestFailed(resource: resource, errorCode: code, errorDescription: description), answering: [$0])
            }
    }

    /// Ends every in-flight flow and request with its failure callback (reconfiguration), saves
    /// what that leaves for the current requestor (an abandoned login must not come back when the
    /// configuration reloads), then forgets the authentication until the new configuration arrives.
    /// Returns the callbacks and that save (none when the store holds it already).
    mutating func abandonEverything(because reason: String, saving current: RequestorConfiguration)
        -> (effects: [Action], save: MachineStep.Save?)
    {
        var actions: [Action] = []
        if let flow = currentLoginFlow {
            // Authorizations waiting for that login end like every other authorization the
            // reconfiguration ends: "not authenticated" would start a login under the old requestor.
            actions += endLogin(
                flow, code: ErrorCode.genericAuthentication, reason: reason, waitingAuthorizationsCode: ErrorCode.genericAuthorization)
        } else if let logout = currentLogoutFlow {
            actions += finishLogout(logout, alsoAnswering: [])
        }
        actions += abortRequests(code: ErrorCode.genericAuthorization, description: reason)
        actions += abandonAccountWork()
        if !stepUpCalls.isEmpty { publishStepUpOutcomes(actions) }
        let tokens = storedTokens
        let save = tokens != persisted ? persist(tokens, current) : nil
        moveAuthentication(to: .unknown)
        authorizationExpiries = [:]
        selectedProviderID = nil
        return (actions, save)
    }

    /// Fails every pending authorization and pre-authorization (logout, sign-out, reconfiguration, a
    /// sign-in the store no longer holds), its rows under `condition`. With `sparingThoseAwaitingLogin`,
    /// an authorization waiting for a login stays with that login.
    mutating func abortRequests(
        code: String, description: String, condition: TransitionGuard? = nil, sparingThoseAwaitingLogin: Bool = false
    ) -> [Action] {
        var actions: [Action] = []
        var requests = authorizations
        let pending = preauthorizations
        authorizations.removeAll()
        if sparingThoseAwaitingLogin {
            authorizations = requests.filter { $0.phase == .waitingForAuthentication }
            requests.removeAll { $0.phase == .waitingForAuthentication }
        }
        preauthorizations.removeAll()
        for request in requests {
            recordAuthorization(from: request.kind, to: .idle, condition, .tokenRequestFailed)
            actions += authorizationFailed(request.resource, code, description, answering: request.waiters)
        }
        for preauthorization in pending {
            recordCall(from: .preauthorizing, to: .idle, condition, .preauthorizedResources)
            actions.append(.emit(.preauthorizedResources([]), answering: [preauthorization.call]))
        }
        return actions
    }
}

extension RequestorConfiguration {
    /// The MVPD with `id`, if this requestor has it.
    public func mvpd(_ id: String) -> MVPD? { mvpds.first { $0.id == id } }
}
