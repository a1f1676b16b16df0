import EntitlementEngine
import EntitlementSupport

/// The web a user agent sees: the service's authenticate page, the MVPDs' login, relay and logout
/// pages, the return to the session's `redirectUrl`, and the second screen's activation page.
extension Simulator {
    /// The second-screen page where a code is entered (`GET …/activate?code=…`).
    package nonisolated var activationURL: String { "\(world.serviceProvider)/activate" }

    /// Answers one page load or form post.
    package func load(_ request: WebRequest) -> WebResponse {
        guard let url = try? ExternalURL.parse(request.url) else { return .error(status: 400, message: "Bad URL.") }
        let sp = world.serviceProvider
        switch url.base {
        case "\(sp)/activate": return startActivation(url.parameters)
        case "\(sp)/activate/done":
            return .page(WebPage(url: url.base, title: "Signed in", message: "Return to your TV."))
        case "\(sp)/login/return": return finishLogin(url.parameters)
        case "\(sp)/api/v2/logout/complete": return finishLogout(url.parameters)
        default: break
        }
        let authenticate = "\(sp)/api/v2/authenticate/"
        if url.base.hasPrefix(authenticate) {
            let segments = url.base.dropFirst(authenticate.count).split(separator: "/", omittingEmptySubsequences: false)
            guard segments.count == 2 else { return .error(status: 404, message: "Not found.") }
            return startLogin(requestorID: String(segments[0]), code: String(segments[1]))
        }
        for provider in world.providers {
            if url.base == "\(provider.loginHost)/login" { return loginPage(provider, request, url.parameters) }
            if url.base == "\(provider.loginHost)/relay" { return relay(url.parameters) }
            if url.base == "\(provider.loginHost)/logout" { return mvpdLogout(provider, url.parameters) }
        }
        return .error(status: 404, message: "Not found: \(url.base)")
    }

    /// `GET /api/v2/authenticate/{sp}/{code}`: a valid session with its redirect URL sends the
    /// browser to its MVPD's login page.
    func startLogin(requestorID: String, code: String) -> WebResponse {
        guard let session = try? session(code, requestorID: requestorID), session.username == nil,
            session.redirectURL != nil, let provider = world.provider(session.mvpdID)
        else { return .error(status: 400, message: "Unknown or expired authentication session.") }
        let page = mint("page.")
        loginPages[page] = LoginPage(code: code)
        return .redirect(PercentEncoding.url("\(provider.loginHost)/login", query: [("session", page)]))
    }

    func loginPage(_ provider: SimulatedWorld.Provider, _ request: WebRequest, _ query: [String: String]) -> WebResponse {
        let pageID = request.method == .post ? request.form["session"] : query["session"]
        guard let pageID, var login = loginPages[pageID], let session = sessions[login.code], session.mvpdID == provider.id,
            let redirectURL = session.redirectURL
        else { return .error(status: 400, message: "Unknown login session.") }
        let form = LoginForm(action: "\(provider.loginHost)/login", hiddenFields: ["session": pageID])
        let page = WebPage(url: "\(provider.loginHost)/login", title: "\(provider.displayName) sign in", message: nil, form: form)
        guard request.method == .post else { return .page(page) }
        if request.form["action"] == "cancel" {
            loginPages[pageID] = nil
            return .redirect(
                PercentEncoding.url(
                    redirectURL,
                    query: [("error", "access_denied"), ("error_description", "The user cancelled the sign-in.")]))
        }
        guard let username = request.form["username"], let user = world.user(username), user.mvpdID == provider.id,
            request.form["password"] == user.password
        else {
            var retry = page
            retry.message = "Invalid username or password."
            return .page(retry)
        }
        mvpdSessions[session.deviceID + "|" + provider.id] = (username, clock.now().adding(provider.authenticationTTL))
        login.username = username
        login.assertion = mint("saml.")
        login.hopsLeft = provider.extraLoginHops
        loginPages[pageID] = login
        return relayOrReturn(pageID, login)
    }

    /// The next SAML-style relay hop, or the service provider's return endpoint when none is left.
    func relayOrReturn(_ pageID: String, _ login: LoginPage) -> WebResponse {
        guard login.hopsLeft > 0, let session = sessions[login.code], let provider = world.provider(session.mvpdID) else {
            return .redirect(
                PercentEncoding.url(
                    "\(world.serviceProvider)/login/return", query: [("session", pageID), ("assertion", login.assertion ?? "")]))
        }
        return .redirect(
            PercentEncoding.url("\(provider.loginHost)/relay", query: [("session", pageID), ("hop", String(login.hopsLeft))]))
    }

    func relay(_ query: [String: String]) -> WebResponse {
        guard let pageID = query["session"], var login = loginPages[pageID], login.hopsLeft > 0,
            query["hop"] == String(login.hopsLeft)
        else { return .error(status: 400, message: "Unknown relay.") }
        login.hopsLeft -= 1
        loginPages[pageID] = login
        return relayOrReturn(pageID, login)
    }

    /// The MVPD's assertion came back: the service saves the device's `regular` profile and sends
    /// the browser to the session's redirect URL, with nothing appended.
    func finishLogin(_ query: [String: String]) -> WebResponse {
        guard let pageID = query["session"], let login = loginPages.removeValue(forKey: pageID),
            let username = login.username, login.hopsLeft == 0, login.assertion == query["assertion"],
            var session = sessions[login.code], clock.now() < session.notAfter, let redirectURL = session.redirectURL,
            let provider = world.provider(session.mvpdID)
        else { return .error(status: 400, message: "Invalid assertion.") }
        let now = clock.now()
        session.username = username
        sessions[login.code] = session
        profiles[Self.profileKey(session.deviceID, session.requestorID, session.mvpdID)] = Profile(
            username: username, kind: .regular, notBefore: now, notAfter: now.adding(provider.authenticationTTL),
            sessionID: session.sessionID)
        return .redirect(redirectURL)
    }

    /// The second screen: a code resumes its session with the activation page's own redirect URL
    /// (`POST sessions/{code}`, as a second-screen app does), then opens its login.
    func startActivation(_ query: [String: String]) -> WebResponse {
        guard let code = query["code"]?.uppercased(), var session = sessions[code], clock.now() < session.notAfter,
            session.username == nil
        else { return .error(status: 400, message: "Unknown or expired code.") }
        if session.redirectURL == nil {
            session.redirectURL = "\(world.serviceProvider)/activate/done"
            sessions[code] = session
        }
        return .redirect(authenticateURL(session.requestorID, code))
    }
}
