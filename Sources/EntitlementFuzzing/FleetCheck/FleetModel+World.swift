import EntitlementEngine
import EntitlementSupport

/// The world around the nodes, as the simulator behaves (`Simulator.swift`, `+Profiles`, `+Logout`,
/// `+Web`), reduced to one device, one requestor and one MVPD: REST API V2 answering each request when
/// it is delivered, and the user's browser — pages the device opened, the user logging in, cancelling
/// or following a logout there, and the redirects it brings back.
extension FleetModel {
    /// How long a session's code lives at the service.
    static let sessionLifetime = Duration.seconds(1800)
    /// How long a profile lives.
    static let profileLifetime = Duration.seconds(86_400)

    /// The login page of session `code`.
    static func loginURL(_ code: Int) -> String { "\(serviceProvider)/api/v2/authenticate/\(requestorID)/C\(code)" }
    /// The MVPD's logout page of logout `id`.
    static func logoutURL(_ id: Int) -> String { "https://acme.check/logout/\(id)" }

    /// The service's answer to `request`, changing what it holds as the simulator would.
    mutating func answer(_ request: BackendRequest) -> Result<BackendResponse, BackendError> {
        let gone = BackendError.httpStatus(400, "invalid_authentication_session: The authentication session is unknown or expired.")
        switch request {
        case .createSession(_, let mvpdID, _, nil) where mvpdID == Self.mvpd.id:
            // A second screen's session: its code is shown on the TV and entered elsewhere.
            service.lastCode += 1
            let code = service.lastCode
            service.session = (code, "", false)
            return .success(
                .session(
                    V2Session(
                        actionName: .resume, actionType: .direct, reasonType: .none, missingParameters: ["redirectUrl"],
                        url: "\(Self.serviceProvider)/api/v2/\(Self.requestorID)/sessions/C\(code)", code: "C\(code)", sessionID: "sid-\(code)",
                        mvpd: mvpdID, serviceProvider: Self.requestorID, notBefore: now, notAfter: now.adding(Self.sessionLifetime))))
        case .createSession(_, let mvpdID, _, let redirect?) where mvpdID == Self.mvpd.id:
            service.lastCode += 1
            let code = service.lastCode
            service.session = (code, redirect, false)
            return .success(
                .session(
                    V2Session(
                        actionName: .authenticate, actionType: .interactive, reasonType: .none, url: Self.loginURL(code), code: "C\(code)",
                        sessionID: "sid-\(code)", mvpd: mvpdID, serviceProvider: Self.requestorID, notBefore: now,
                        notAfter: now.adding(Self.sessionLifetime))))
        case .profileByCode(_, let code):
            guard let session = service.session, "C\(session.code)" == code else { return .failure(gone) }
            guard session.loggedIn, service.profile else { return .success(.profiles([:])) }
            return .success(.profiles([Self.mvpd.id: profile]))
        case .profile(_, let mvpdID):
            return .success(.profiles(service.profile && mvpdID == Self.mvpd.id ? [mvpdID: profile] : [:]))
        case .profiles:
            return .success(.profiles(service.profile ? [Self.mvpd.id: profile] : [:]))
        case .logout(_, let mvpdID, let redirect):
            guard service.profile else { return .success(.logouts([mvpdID: V2Logout(actionName: .invalid, actionType: .none, mvpd: mvpdID)])) }
            service.profile = false
            service.lastLogout += 1
            service.logoutReturns[service.lastLogout] = redirect
            return .success(
                .logouts([
                    mvpdID: V2Logout(actionName: .logout, actionType: .interactive, mvpd: mvpdID, url: Self.logoutURL(service.lastLogout))
                ]))
        case .partnerSession where constants.platform:
            return .success(
                .session(
                    V2Session(
                        actionName: .partnerProfile, actionType: .direct, reasonType: .none,
                        url: "\(Self.serviceProvider)/api/v2/\(Self.requestorID)/profiles/sso/Apple", sessionID: "sid-sso",
                        serviceProvider: Self.requestorID,
                        authenticationRequest: V2PartnerRequest(type: "saml", request: "R", attributeNames: ["userID"]))))
        case .partnerProfile(_, _, let assertion) where constants.platform:
            // The platform's assertion is good while its account is signed in: the service saves the profile.
            guard service.platformSignedIn, assertion == Self.platformAssertion else {
                return .failure(.httpStatus(400, "invalid_parameter_saml_response: The partner's SAML response is not valid here."))
            }
            service.profile = true
            return .success(.profiles([Self.mvpd.id: platformProfile]))
        case .authorize(_, let mvpdID, let resource) where constants.authorize && mvpdID == Self.mvpd.id && resource == Self.channel:
            // The TV provider permits the channel to the device's profile, with a media token; without one the
            // service asks for a login (`authenticated_profile_missing`, action `authentication`).
            guard service.profile else {
                return .failure(.authenticationRequired("authenticated_profile_missing: The authenticated profile is missing."))
            }
            service.decisionsMade += 1
            return .success(
                .decisions([
                    V2Decision(
                        resource: resource, serviceProvider: Self.requestorID, mvpd: mvpdID, authorized: true, source: .mvpd,
                        token: V2Decision.Token(
                            notBefore: now, notAfter: now.adding(.seconds(300)), serialized: Self.decisionTokenPrefix + String(service.decisionsMade)),
                        notBefore: now, notAfter: now.adding(.seconds(300)))
                ]))
        case .preauthorize(_, let mvpdID, let resources) where constants.preauthorize && mvpdID == Self.mvpd.id && resources == [Self.channel]:
            // Pre-authorization: the same decision without a media token, while the device's profile lives.
            guard service.profile else {
                return .failure(.authenticationRequired("authenticated_profile_missing: The authenticated profile is missing."))
            }
            return .success(
                .decisions([
                    V2Decision(
                        resource: Self.channel, serviceProvider: Self.requestorID, mvpd: mvpdID, authorized: true, source: .mvpd,
                        token: nil, notBefore: now, notAfter: now.adding(.seconds(300)))
                ]))
        default:
            return .failure(.httpStatus(400, "unmodelled_request: the check's service does not answer \(request.operation)."))
        }
    }

    /// The step-up provider's answer to a credentials request of `node` presenting `transaction`: without
    /// one, advice to approve a new transaction; with one it issued and never granted with, the media token
    /// it grants (once); with any other, a denial — and a transaction presented twice is a broken promise.
    mutating func providerAnswer(presenting transaction: String?, on node: Int) -> Result<ProviderCredentials, ProviderFailure> {
        guard let transaction else {
            service.transactionsIssued += 1
            let id = "T\(service.transactionsIssued)"
            return .failure(.stepUpRequired(StepUpAdvice(kind: .transaction, value: "TransactionConditionAdvice", transactionID: id)))
        }
        guard let number = Int(transaction.dropFirst()), transaction.hasPrefix("T"), number <= service.transactionsIssued else {
            problems.append("node \(Self.name(node)) presented a transaction the provider never issued: \(transaction)")
            return .failure(.denied("The transaction is unknown."))
        }
        guard service.transactionsUsed.insert(number).inserted else {
            // A store that lost the mark saying the transaction is being used can have it presented again.
            if lostWrite { return .failure(.denied("The transaction was used.")) }
            problems.append("node \(Self.name(node)) presented transaction \(transaction) a second time: it is single use")
            return .failure(.denied("The transaction was used."))
        }
        if number <= transactionsBeforeLogout { service.grantedAfterLogout.insert(number) }
        return .success(ProviderCredentials(token: Self.mediaTokenPrefix + String(number)))
    }

    /// The media tokens the step-up provider grants: this prefix and the transaction's number.
    static let mediaTokenPrefix = "media-"
    /// The media tokens of the service's decisions for the channel: this prefix and the decision's number.
    static let decisionTokenPrefix = "tv-"

    /// The decision a media token of the service's was made in.
    static func decision(granting token: String) -> Int? {
        token.hasPrefix(decisionTokenPrefix) ? Int(token.dropFirst(decisionTokenPrefix.count)) : nil
    }

    /// The tokens the provider grants for the open resource: this prefix and the request's number.
    static let openTokenPrefix = "open-"

    /// The request for the open resource a token of the provider was granted for.
    static func openRequest(granting token: String) -> Int? {
        token.hasPrefix(openTokenPrefix) ? Int(token.dropFirst(openTokenPrefix.count)) : nil
    }

    /// The transaction a media token of the step-up provider was granted with.
    static func transaction(granting token: String) -> Int? {
        token.hasPrefix(mediaTokenPrefix) ? Int(token.dropFirst(mediaTokenPrefix.count)) : nil
    }

    /// The profile a login saves (the user `alice`).
    var profile: V2Profile {
        V2Profile(
            notBefore: service.profileIssued, notAfter: service.profileIssued.adding(Self.profileLifetime), issuer: Self.mvpd.id, kind: .regular,
            attributes: ["userID": .init(value: .string("alice"))])
    }

    /// The profile a sign-in with the platform's account saves.
    var platformProfile: V2Profile {
        V2Profile(
            notBefore: now, notAfter: now.adding(Self.profileLifetime), issuer: Self.mvpd.id, kind: .appleSSO,
            attributes: ["userID": .init(value: .string("alice"))])
    }

    /// The assertion the platform's account hands the app for the MVPD.
    static let platformAssertion = PlatformAssertion(mvpdID: mvpd.id, serialized: "vsa.platform.alice")

    /// A sign-in with the platform's account (its picker, or a node's silent one at `setRequestor` as it
    /// completes): a login made now — a sign-in told after it keeps every promise about logins.
    mutating func noteLoginWithPlatform() {
        pages.append(Page(seq: pages.count, url: "platform:\(pages.count)", kind: .platform, used: true))
        lastLoginPage = pages.count - 1
    }

    /// The web view opened `url` (or the TV showed a registration code, `code:…`): a page the user can act
    /// on (the same page once).
    mutating func open(_ url: String) {
        guard !pages.contains(where: { $0.url == url }) else { return }
        let kind: Page.Kind
        if let code = Self.number(after: "code:C", in: url) {
            kind = .code(code)
        } else if let code = Self.number(after: Self.loginPrefix, in: url) {
            kind = .login(code: code)
        } else if let id = Self.number(after: Self.logoutPrefix, in: url) {
            kind = .logout(id: id)
        } else {
            problems.append("the device was sent to a page nobody serves: \(url)")
            return
        }
        pages.append(Page(seq: pages.count, url: url, kind: kind))
        // A newer login page: the device chose again, and a login made on an older one promises nothing.
        if case .login = kind {
            newestLoginRedirect = nil
            newestPageOpened = now
        }
    }

    /// A login page's URL before its code, and a logout page's before its id.
    private static let loginPrefix = String(loginURL(0).dropLast(1))
    private static let logoutPrefix = String(logoutURL(0).dropLast(1))

    /// The number `url` ends with after `prefix`.
    private static func number(after prefix: String, in url: String) -> Int? {
        guard url.hasPrefix(prefix) else { return nil }
        return Int(Substring(url.utf8.dropFirst(prefix.utf8.count)))
    }

    /// The user logs in on login page `seq`: the service saves the profile and the browser comes back
    /// with the session's redirect — when the page's session is still the live one (a replaced session's
    /// page shows an error and goes nowhere).
    mutating func logIn(page index: Int) {
        pages[index].used = true
        let code: Int
        switch pages[index].kind {
        case .login(let number), .code(let number): code = number
        case .logout, .platform: return
        }
        // A replaced session's page (or code) shows an error and goes nowhere.
        guard var session = service.session, session.code == code else { return }
        session.loggedIn = true
        service.session = session
        service.profile = true
        // The model's clock stands still between events, and real logins are seconds apart: each session's
        // login is issued at an instant of its own.
        service.profileIssued = now.adding(.milliseconds(code))
        // The newest page logged in on: a login on an older page whose session is still live (the platform's
        // sign-in made no session) does not undo one made since.
        lastLoginPage = max(lastLoginPage, pages[index].seq)
        guard case .login = pages[index].kind else {
            newestLoginRedirect = nil  // a code brings no redirect: the TV's poll finds the sign-in
            return
        }
        let newest = pages.last { if case .login = $0.kind { true } else { false } }?.seq
        // A session or logout request still out may reach the service after this sign-in and undo it (a
        // newer session replaces the code, a logout removes the profile): no node can prevent that, so a
        // login made then promises nothing.
        let serviceCaughtUp = !nodes.contains { node in
            node.requests.contains { sent in
                switch sent.request {
                case .createSession, .logout: true
                default: false
                }
            }
        }
        newestLoginRedirect =
            newest == pages[index].seq && pages[index].seq >= chosenFromPage && serviceCaughtUp ? redirects.count : nil
        newestLoginDelivered = false
        redirects.append(Redirect(url: session.redirect))
    }

    /// The user cancels at the MVPD on login page `seq`: the browser comes back with `error=`.
    mutating func cancel(page index: Int) {
        pages[index].used = true
        guard case .login(let code) = pages[index].kind, let session = service.session, session.code == code else { return }
        redirects.append(Redirect(url: session.redirect + "&error=access_denied"))
    }

    /// The browser follows the MVPD's logout page `seq` back to the app.
    mutating func followLogout(page index: Int) {
        pages[index].used = true
        guard case .logout(let id) = pages[index].kind, let back = service.logoutReturns.removeValue(forKey: id) else { return }
        redirects.append(Redirect(url: back))
    }
}
