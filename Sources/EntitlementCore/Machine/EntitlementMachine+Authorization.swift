/// The authorization region (one request machine per resource and data), and the calls region's
/// pre-authorizations and metadata, which need an authentication but no flow of their own.
extension EntitlementMachine {
    // MARK: - check/getAuthorization

    mutating func requestAuthorization(
        _ id: CallID, resource: String, data: [String: String], isCheck: Bool, _ configuration: RequestorConfiguration
    ) -> [Action] {
        guard !resource.isEmpty else {
            recordCall(.emptyArgument, .status)
            return refuse(id, .invalidArgument("the resource id is empty"))
        }
        let existing = authorizations.firstIndex { $0.resource == resource && $0.data == data }
        if let index = existing, !(isCheck && authorizations[index].phase == .waitingForAuthentication) {
            recordAuthorization(from: authorizations[index].kind, to: authorizations[index].kind, .identicalRequest, .join)
            authorizations[index].waiters.append(id)
            let joined: [Action] = [.log(.joined(id, flow: "the authorization of '\(resource)'"))]
            guard authorizations[index].phase == .waitingForAuthentication else { return joined }
            return joined + showLoginAgain(joining: nil, configuration)
        }
        if !stepUps.isEmpty, let waiting = waitForStepUpElsewhere(id, resource: resource, data: data) { return waiting }
        if let link = answeringLink(for: resource), !link.isTVProvider {
            return askProvider(id, link, resource: resource, data: data, configuration)
        }
        if case .authenticated(let token) = authentication {
            authorizations.append(
                AuthorizationRequest(resource: resource, data: data, waiters: [id], phase: .waitingForAuthentication))
            return startAuthorizing(at: authorizations.count - 1, token, from: .idle, configuration)
        }
        let current = existing.map { authorizations[$0].kind } ?? .idle
        if isCheck {
            recordAuthorization(from: current, to: current, .notAuthenticated, .tokenRequestFailed)
            return authorizationFailed(
                resource, ErrorCode.userNotAuthenticated, "The user is not authenticated.", answering: [id])
        }
        if case .logout(let flow, .loggingOut) = authentication {
            return endLogoutForLogin(flow) + requestAuthorization(id, resource: resource, data: data, isCheck: isCheck, configuration)
        }
        if currentLogoutFlow != nil {
            recordAuthorization(from: .idle, to: .idle, .logoutInProgress, .status)
            return refuse(id, .logoutInProgress)
        }
        recordAuthorization(from: .idle, to: .waitingForAuthentication, .notAuthenticated)
        authorizations.append(
            AuthorizationRequest(resource: resource, data: data, waiters: [id], phase: .waitingForAuthentication))
        // During a login the device is shown again what the login showed it, as `getAuthentication` asked again does.
        if currentLoginFlow != nil { return [.log(.joined(id, flow: "the running login"))] + showLoginAgain(joining: nil, configuration) }
        return startLogin(waiters: [], data: [:], configuration)
    }

    /// Asks for a decision for the resource (one `POST decisions/authorize/{mvpd}` per call: a
    /// decision is never reused for playback, and its media token is used once).
    mutating func startAuthorizing(
        at index: Int, _ token: AuthenticationToken, from: AuthorizationRequest.Kind,
        condition: TransitionGuard? = nil, _ configuration: RequestorConfiguration, also extra: TransitionAction? = nil
    ) -> [Action] {
        let request = authorizations[index]
        let operation = nextOperation(.authorization)
        if let extra {
            recordAuthorization(from: from, to: .authorizing, condition, extra, .authorize)
        } else {
            recordAuthorization(from: from, to: .authorizing, condition, .authorize)
        }
        authorizations[index].phase = .authorizing(operation)
        return [.callBackend(operation, .authorize(context(configuration), mvpd: token.mvpdID, resource: request.resource))]
    }

    /// A login ended with authentication: every authorization that waited for it starts.
    mutating func resumeAuthorizationsAfterLogin(_ token: AuthenticationToken, _ configuration: RequestorConfiguration)
        -> [Action]
    {
        var actions: [Action] = []
        for index in authorizations.indices where authorizations[index].phase == .waitingForAuthentication {
            actions += startAuthorizing(
                at: index, token, from: .waitingForAuthentication, condition: .loginSucceeded, configuration)
        }
        return actions
    }

    mutating func authorizationStepFinished(
        _ index: Int, _ result: Result<BackendResponse, BackendError>, _ configuration: RequestorConfiguration
    ) -> [Action] {
        let request = authorizations[index]
        guard case .authenticated(let token) = authentication else {
            authorizations.remove(at: index)
            recordAuthorization(from: request.kind, to: .idle, .notAuthenticated, .tokenRequestFailed)
            return authorizationFailed(
                request.resource, ErrorCode.userNotAuthenticated, "The user is not authenticated.",
                answering: request.waiters)
        }
        authorizations.remove(at: index)
        guard case .success(.decisions(let decisions)) = result,
            let decision = decisions.first(where: { $0.resource == request.resource })
        else {
            if case .failure(let error) = result { return authorizationFailure(request, error, token, configuration) }
            recordAuthorization(from: request.kind, to: .idle, .malformedAnswer, .tokenRequestFailed)
            return authorizationFailed(
                request.resource, ErrorCode.genericAuthorization,
                "malformed backend response: the answer has no decision for the resource", answering: request.waiters)
        }
        if decision.authorized {
            // The media token's window is the service's clock: the player's verifier judges it, not this device.
            guard let media = decision.token, !media.serialized.isEmpty else {
                recordAuthorization(from: request.kind, to: .idle, .malformedAnswer, .tokenRequestFailed)
                return authorizationFailed(
                    request.resource, ErrorCode.genericAuthorization,
                    "malformed backend response: the decision has no valid media token", answering: request.waiters)
            }
            // The decision's window, for TTL_AUTHZ only; it never outlives its authentication.
            authorizationExpiries[request.resource] = min(decision.notAfter ?? media.notAfter, token.expires)
            // Adobe's SDK says how a permit came: Z011 under TempPass, Z010 under a degradation rule.
            let notice: StatusReport?
            if token.source == .tempPass {
                recordAuthorization(from: request.kind, to: .idle, .tempPass, .status, .setToken)
                notice = Notice.tempPassPermit.report("Authorized with TempPass.")
            } else if decision.source == .degradation || token.source == .degraded {
                recordAuthorization(from: request.kind, to: .idle, .degraded, .status, .setToken)
                notice = Notice.degradedPermit.report("Authorized under a degradation rule: the TV provider was not asked.")
            } else {
                recordAuthorization(from: request.kind, to: .idle, nil, .setToken)
                notice = nil
            }
            var actions: [Action] = []
            actions.reserveCapacity(request.waiters.count + 2)
            if let notice { actions.append(.emit(.status(notice), answering: [])) }
            actions.append(authorizationTracking(success: true, token: token, cached: false, error: "", details: ""))
            for waiter in request.waiters {
                actions.append(.emit(.setToken(token: media.serialized, resource: request.resource), answering: [waiter]))
            }
            return actions
        }
        let error =
            decision.error.map { BackendError(v2: $0, httpStatus: 200) }
            ?? .denied(code: "authorization_denied", message: "The TV provider denied access to '\(request.resource)'.")
        return authorizationFailure(request, error, token, configuration)
    }

    /// Classifies a failure as authentication, authorization (with the MVPD's message) or other.
    private mutating func authorizationFailure(
        _ request: AuthorizationRequest, _ error: BackendError, _ token: AuthenticationToken,
        _ configuration: RequestorConfiguration
    ) -> [Action] {
        if error.code == .authenticationRequired, error.message.hasPrefix(Self.hbaDenial), !request.steppedUp,
            settings.stepUp?.resources.contains(request.resource) == true, case .authorizing(let answered) = request.phase
        {
            // Adobe's home-based authentication policy: the re-authentication form of a step-up.
            authorizations.append(request)
            return adviseStepUp(
                at: authorizations.count - 1, ProviderLink.tvProviderID, StepUpAdvice(kind: .authenticateToService, value: "hba_policies"),
                answered: answered, until: now.adding(settings.stepUp?.timeout ?? .seconds(120)))
        }
        let why = error.message
        switch error.code {
        case .authenticationRequired where token.source == .tempPass:
            // The service ended the TempPass (its time or resources are used up): as when it expires
            // here, say so (N111) and forget the pseudo-MVPD, so the next login shows the picker.
            recordAuthorization(from: request.kind, to: .idle, .tempPass, .status, .tokenRequestFailed)
            dropAuthentication()
            selectedProviderID = nil
            let notice = Notice.tempPassOver.report("The TempPass expired; sign in with a TV provider to keep watching.")
            return [.emit(.status(notice), answering: [])]
                + authorizationFailed(
                    request.resource, ErrorCode.userNotAuthenticated, "Authentication required: \(why)", answering: request.waiters)
        case .authenticationRequired:
            // The server no longer knows this authentication: drop it locally too.
            recordAuthorization(from: request.kind, to: .idle, .authenticationRequired, .tokenRequestFailed)
            dropAuthentication()
            return authorizationFailed(
                    request.resource, ErrorCode.userNotAuthenticated, "Authentication required: \(why)",
                    answering: request.waiters)
        case .denied:
            let message = error.message
            // Adobe's SDK reports Z100 with the MVPD's words beside tokenRequestFailed — Z169 when a
            // degradation rule (AuthZNone) denied it, not the MVPD.
            recordAuthorization(from: request.kind, to: .idle, .denied, .status, .tokenRequestFailed)
            authorizationExpiries[request.resource] = nil
            let notice: Notice = error.denialCode == "authorization_denied_by_degradation_rule" ? .degradationDenial : .authorizationDenied
            return [.emit(.status(notice.report(message)), answering: [])]
                + authorizationFailed(
                    request.resource, ErrorCode.userNotAuthorized, message, answering: request.waiters)
        case .throttled:
            // … and Z100 when the service throttles the authorization.
            recordAuthorization(from: request.kind, to: .idle, .throttled, .status, .tokenRequestFailed)
            return [.emit(.status(Notice.authorizationDenied.report(sentence(error.summary))), answering: [])]
                + authorizationFailed(
                    request.resource, ErrorCode.genericAuthorization, error.summary, answering: request.waiters)
        default:  // network, timeout, an HTTP status, retries used up, a malformed answer, the store away
            recordAuthorization(from: request.kind, to: .idle, .failed, .tokenRequestFailed)
            return authorizationFailed(
                request.resource, ErrorCode.genericAuthorization, error.summary, answering: request.waiters)
        }
    }

    /// The code of Adobe's home-based authentication denial (action `authentication`).
    static let hbaDenial = "authorization_denied_by_hba_policies"

    /// The service no longer knows the profile (an error with `action: authentication`): the
    /// engine forgets it too, so `checkAuthentication` answers 0 and the next login starts fresh.
    mutating func dropAuthentication() {
        guard case .authenticated = authentication else { return }
        moveAuthentication(to: .unauthenticated, .authenticationRequired)
        authorizationExpiries = [:]
    }

    // MARK: - Pre-authorization (calls region)

    mutating func checkPreauthorizedResources(
        _ id: CallID, _ resources: [String], cache: Bool, _ configuration: RequestorConfiguration
    ) -> [Action] {
        guard !resources.contains(where: \.isEmpty) else {
            recordCall(.emptyArgument, .status)
            return refuse(id, .invalidArgument("a resource id is empty"))
        }
        // With a chain, a provider other than the TV provider decides what it claims, locally.
        var known = decidedByProviders(resources)
        guard case .authenticated(let token) = authentication, !resources.isEmpty else {
            recordCall(.localAnswer, .preauthorizedResources)
            return [.emit(.preauthorizedResources(resources.filter { known[$0] == true }), answering: [id])]
        }
        guard resources.count <= settings.preauthorizationLimit else {
            recordCall(.tooManyResources, .status)
            return refuse(id, .tooManyResources(limit: settings.preauthorizationLimit))
        }
        if cache {
            for resource in resources where known[resource] == nil {
                if let decision = preauthorizationCache[resource], decision.expires > now { known[resource] = decision.authorized }
            }
        }
        var missing: [String] = []
        missing.reserveCapacity(resources.count)
        for resource in resources where known[resource] == nil && !missing.contains(resource) { missing.append(resource) }
        guard !missing.isEmpty else {
            recordCall(.cachedDecisions, .preauthorizedResources)
            return [.emit(.preauthorizedResources(resources.filter { known[$0] == true }), answering: [id])]
        }
        recordCall(to: .preauthorizing, .authenticated, .preauthorize)
        let operation = nextOperation(.preauthorization)
        preauthorizations.append(PendingPreauthorization(operation: operation, call: id, resources: resources, known: known))
        return [
            .callBackend(operation, .preauthorize(context(configuration), mvpd: token.mvpdID, resources: missing))
        ]
    }

    mutating func preauthorizationFinished(
        _ pending: PendingPreauthorization, _ result: Result<BackendResponse, BackendError>
    ) -> [Action] {
        switch result {
        case .success(.decisions(let decisions)):
            var pending = pending
            let authenticationLost = absorb(decisions, into: &pending)
            let failures = pending.failures
            if authenticationLost {
                recordCall(from: .preauthorizing, to: .idle, .authenticationRequired, .status, .preauthorizedResources)
                dropAuthentication()
                return preauthorizationFailed(pending, "the service no longer knows the authentication (\(failures.joined(separator: ", ")))")
            }
            let answer = Action.emit(
                .preauthorizedResources(pending.resources.filter { pending.known[$0] == true }), answering: [pending.call])
            guard !failures.isEmpty else {
                recordCall(from: .preauthorizing, to: .idle, nil, .preauthorizedResources)
                return [answer]
            }
            recordCall(from: .preauthorizing, to: .idle, .partialFailure, .status, .preauthorizedResources)
            let report = Notice.preauthorizationPartial.report("Pre-authorization failed for \(failures.joined(separator: ", ")); the other resources were decided.")
            return [.emit(.status(report), answering: []), answer]
        case .success:
            recordCall(from: .preauthorizing, to: .idle, .malformedAnswer, .status, .preauthorizedResources)
            return preauthorizationFailed(pending, "malformed backend response")
        case .failure(let error):
            if error.code == .authenticationRequired {
                // As for an authorization: the service no longer knows the profile, so neither does the engine.
                recordCall(from: .preauthorizing, to: .idle, .authenticationRequired, .status, .preauthorizedResources)
                dropAuthentication()
            } else {
                recordCall(from: .preauthorizing, to: .idle, nil, .status, .preauthorizedResources)
            }
            return preauthorizationFailed(pending, error.summary)
        }
    }

    /// Takes the items of `decisions` that `pending` asked about into it: a decision, or a denial on the
    /// item (V2 sends `preauthorization_denied_by_mvpd` with it), is known and cached; any other item
    /// error leaves the resource undecided and is named among the failures. Whether an item said the
    /// service no longer knows the authentication.
    mutating func absorb(_ decisions: [V2Decision], into pending: inout PendingPreauthorization) -> Bool {
        var authenticationLost = false
        let expires = now.adding(settings.preauthorizationCacheLifetime)
        for decision in decisions where pending.resources.contains(decision.resource) {
            let error = decision.error.map { BackendError(v2: $0, httpStatus: 200) }
            switch error?.code {
            case nil, .denied?:
                let authorized = error == nil && decision.authorized
                pending.known[decision.resource] = authorized
                preauthorizationCache[decision.resource] = CachedDecision(authorized: authorized, expires: expires)
            case .authenticationRequired?:
                authenticationLost = true
                pending.failures.append("\(decision.resource) (\(decision.error?.code ?? ""))")
            default:
                pending.failures.append("\(decision.resource) (\(decision.error?.code ?? ""))")
            }
        }
        return authenticationLost
    }

    private func preauthorizationFailed(_ pending: PendingPreauthorization, _ why: String) -> [Action] {
        [
            .emit(.status(Notice.preauthorizationFailed.report(sentence("Pre-authorization failed: \(why)"))), answering: []),
            .emit(.preauthorizedResources([]), answering: [pending.call]),
        ]
    }

    // MARK: - Metadata (calls region)

    /// Answered from local state: the profile's attributes and validity, the last decision's
    /// window, the device id (REST API V2 has no metadata endpoint).
    mutating func getMetadata(_ id: CallID, _ key: MetadataKey, _ configuration: RequestorConfiguration) -> [Action] {
        func answer(_ value: MetadataValue?, encrypted: Bool = false) -> [Action] {
            recordCall(.localAnswer, .setMetadataStatus)
            return [.emit(.setMetadataStatus(value, encrypted: encrypted, key: key), answering: [id])]
        }
        if case .userMetadata("") = key {
            recordCall(.emptyArgument, .status)
            return refuse(id, .invalidArgument("the metadata name is empty"))
        }
        guard case .authenticated(let token) = authentication else {
            return key == .deviceID ? answer(.text(deviceID)) : answer(nil)
        }
        switch key {
        case .deviceID:
            return answer(.text(deviceID))
        case .authenticationExpiry:
            return answer(.text(String(token.expires.milliseconds)))
        case .authorizationExpiry(let resource):
            return answer(authorizationExpiries[resource].flatMap { isUsable($0) ? .text(String($0.milliseconds)) : nil })
        case .userMetadata(let name):
            return answer(token.packedMetadata[name], encrypted: token.encryptedMetadata.contains(name))
        }
    }
}
