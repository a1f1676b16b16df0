import EntitlementSupport

/// `handleExternalURL`: the redirect security checklist (A.5 items 1–13), in a fixed order.
///
/// 1. parse strictly (malformed, duplicated parameters) → 2. exact redirect URL → 3. a pending
/// flow → 4. its deadline → 5. `state` present and equal (constant time), also before `error=` →
/// 6. the MVPD chosen for this flow → 7. `error=` ends the flow → 8. read the profile by the
/// session's code, once. REST API V2 puts no code in the redirect (the engine holds the session's
/// code from `POST sessions`), so there is no code to check or exchange and PKCE has nothing to
/// protect; the `state` the engine put in its own `redirectUrl` binds the redirect to the flow.
/// Every refusal is answered by one `status` and changes no flow. Steps 1–2 do not depend on any
/// state, so their refusals are rows of the calls region; the rest are authentication rows.
extension EntitlementMachine {
    mutating func handleExternalURL(_ id: CallID, _ raw: String, _ configuration: RequestorConfiguration) -> [Action] {
        let url: ExternalURL
        do {
            url = try ExternalURL.parse(raw)
        } catch {
            recordCall(.badURL, .status)
            return refuse(id, .redirect(error))
        }
        guard url.returns(to: settings.redirectURL) else {
            recordCall(.badURL, .status)
            return refuse(id, .redirect(.urlMismatch(expected: settings.redirectURL, received: url.base)))
        }
        switch authentication {
        case .login(let flow, .awaitingRedirect): return loginRedirect(id, url, flow, configuration)
        case .logout(let flow, .loggingOut): return logoutRedirect(id, url, flow)
        case .logout(let flow, .requestingLogout):
            if let pending = newerLoginStored(), let state = url.parameters["state"], ConstantTime.equals(state, pending.state) {
                // The redirect of that newer login: it completes it here too, once the logout is over.
                let ended = endLogout(flow, forNewer: pending, configuration)
                guard case .login(let login, .awaitingRedirect) = authentication else { return ended + refuse(id, .redirect(.expired)) }
                return ended + loginRedirect(id, url, login, configuration)
            }
            fallthrough
        default:
            moveAuthentication(to: authentication, .noPendingFlow, .status)
            if let state = url.parameters["state"], let expired = expiredFlowState, ConstantTime.equals(state, expired) {
                return refuse(id, .redirect(.expired))
            }
            return refuse(id, .redirect(.noPendingFlow))
        }
    }

    private mutating func loginRedirect(
        _ id: CallID, _ url: ExternalURL, _ flow: LoginFlow, _ configuration: RequestorConfiguration
    ) -> [Action] {
        if let completing = flow.completingElsewhere, now < expiry(of: completing),
            let state = url.parameters["state"], ConstantTime.equals(state, completing.state)
        {
            // The same redirect again: another instance accepted it and reads the profile — or died doing
            // so, and the browser tried again here. It is not accepted a second time: the call joins the
            // login, whose profile is read here by its session code (it signs the device in when it is
            // there), and is answered with the login's outcome either way.
            var joined = flow
            joined.waiters.append(id)
            return probeLogin(joined, configuration, joining: id)
        }
        guard let secrets = flow.secrets, let code = flow.code, let deadline = flow.deadline, let mvpd = flow.mvpd
        else { return refuse(id, .redirect(.noPendingFlow)) }
        if now >= deadline {
            return expireLogin(flow, condition: .deadlinePassed) + refuse(id, .redirect(.expired))
        }
        if let refusal = stateRefusal(url, expected: secrets.state) ?? providerRefusal(url, mvpd) {
            moveAuthentication(to: authentication, .refused, .status)
            return refuse(id, .redirect(refusal))
        }
        if let error = url.parameters["error"] {
            var message = "The MVPD ended the login with '\(error.prefix(64))'"
            let description = String((url.parameters["error_description"] ?? "").prefix(200))
            if !description.isEmpty { message += ": " + description }
            if !message.hasSuffix(".") { message += "." }
            let notice = Notice.redirectProviderError.report(message)
            return endLogin(flow, code: ErrorCode.genericAuthentication,
                    reason: "The MVPD refused the login (\(error.prefix(64))).", alsoAnswering: [id], notice: notice,
                    condition: .providerError)
        }
        var accepted = flow
        accepted.waiters.append(id)
        accepted.redirectAccepted = true
        let operation = nextOperation(.authentication)
        moveAuthentication(
            to: .login(accepted, .readingProfile(operation: operation, attempt: 1)), .accepted, .cancelTimer, .readProfile)
        return [
            .cancelTimer(.redirectDeadline(flow.id)), .callBackend(operation, .profileByCode(context(configuration), code: code)),
        ]
    }

    private mutating func logoutRedirect(_ id: CallID, _ url: ExternalURL, _ flow: LogoutFlow) -> [Action] {
        guard let secrets = flow.secrets, let deadline = flow.deadline else {
            return refuse(id, .redirect(.noPendingFlow))
        }
        if now >= deadline {
            return finishLogout(flow, alsoAnswering: [], condition: .deadlinePassed) + refuse(id, .redirect(.expired))
        }
        if let refusal = stateRefusal(url, expected: secrets.state) {
            moveAuthentication(to: authentication, .refused, .status)
            return refuse(id, .redirect(refusal))
        }
        return finishLogout(flow, alsoAnswering: [id], condition: .accepted)
    }

    private func stateRefusal(_ url: ExternalURL, expected: String) -> RedirectRefusal? {
        guard let state = url.parameters["state"], !state.isEmpty else { return .missingState }
        return ConstantTime.equals(state, expected) ? nil : .stateMismatch
    }

    private func providerRefusal(_ url: ExternalURL, _ mvpd: MVPD) -> RedirectRefusal? {
        url.parameters["mvpd"] == mvpd.id ? nil : .providerMismatch(expected: mvpd.id, received: url.parameters["mvpd"])
    }
}
