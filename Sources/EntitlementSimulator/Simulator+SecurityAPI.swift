import EntitlementEngine
import EntitlementSupport

extension Simulator {
    /// Pugpig's Security API for the world's subscription provider `providerID`: `operation` is
    /// `sign_in` (any fields; `username` and `password` name a subscriber — the same answer for an
    /// active and a lapsed one), `verify_subscription` (`token`), `edition_credentials` (`token`,
    /// `product_id`), `renew_token` (`token`; only when the provider renews) or `sign_out` (`token`).
    /// Answers are XML in the specification's shape, never cached.
    package func securityAPI(providerID: String, operation: String, form: [String: String]) -> ProgrammerAnswer {
        if let fault = takeFault(providerID) { return fault }
        guard let provider = world.chainProviders.first(where: { $0.id == providerID && $0.kind == .subscription }) else {
            return Self.xml(#"<error status="unknown" message="No such service."/>"#, status: 404)
        }
        func subscriber(_ token: String?) -> SimulatedWorld.Subscriber?? {
            guard let token, let issued = subscriptionTokens[token], issued.provider == providerID else { return .some(nil) }
            guard issued.valid else { return nil }
            return subscribers.first { $0.username == issued.subscriber && $0.providerID == providerID }
        }
        switch operation {
        case "sign_in":
            guard let user = subscribers.first(where: {
                $0.providerID == providerID && $0.username == form["username"] && $0.password == form["password"]
            }) else {
                return Self.xml(#"<error status="notrecognised" message="Credentials not recognised"/>"#)
            }
            return Self.xml("<token>\(issueToken(providerID, user.username))</token>")
        case "verify_subscription":
            guard let found = subscriber(form["token"]) else { return Self.invalidToken }
            guard let user = found else { return Self.invalidToken }
            let issues = user.lapsed ? "" : user.issues.sorted().map { #"<issue id="\#($0.markupEscaped)"/>"# }.joined()
            let message = user.message ?? (user.lapsed ? "Your subscription has lapsed." : "Your subscription is active.")
            return Self.xml(
                #"<subscription state="\#(user.lapsed ? "lapsed" : "active")" message="\#(message.markupEscaped)">\#(issues)</subscription>"#)
        case "edition_credentials":
            guard let found = subscriber(form["token"]), let user = found else { return Self.invalidToken }
            let product = form["product_id"] ?? ""
            if user.lapsed { return Self.xml(#"<error status="lapsed" message="Your subscription has lapsed."/>"#) }
            guard user.issues.contains(product) else {
                return Self.xml(#"<error status="notentitled" message="Your subscription does not include \#(product.markupEscaped)."/>"#)
            }
            let password = Base64URL.encode(Array(SHA256.hash("\(providerID)|\(user.username)|\(product)").prefix(12)))
            remember(password)
            return Self.xml("<credentials><userid>\(user.username.markupEscaped)</userid><password>\(password)</password></credentials>")
        case "renew_token":
            guard provider.renews, let token = form["token"], let issued = subscriptionTokens[token], issued.provider == providerID else {
                return Self.xml(#"<error status="invalidtoken" message="The token cannot be renewed."/>"#)
            }
            subscriptionTokens[token] = nil
            return Self.xml("<token>\(issueToken(providerID, issued.subscriber))</token>")
        case "sign_out":
            if let token = form["token"] { subscriptionTokens[token] = nil }
            return Self.xml("<ok/>")
        default:
            return Self.xml(#"<error status="unknown" message="No such operation."/>"#, status: 404)
        }
    }

    /// Every token the subscription `providerID` issued stops being valid (`! server ID invalidates tokens`).
    package func invalidateSubscriptionTokens(_ providerID: String) {
        for (token, issued) in subscriptionTokens where issued.provider == providerID {
            subscriptionTokens[token] = (issued.provider, issued.subscriber, false)
        }
    }

    /// Every token the subscription `providerID` issued to `username` stops being valid.
    package func invalidateSubscriptionTokens(_ providerID: String, of username: String) {
        for (token, issued) in subscriptionTokens where issued.provider == providerID && issued.subscriber == username {
            subscriptionTokens[token] = (issued.provider, issued.subscriber, false)
        }
    }

    /// The subscriber's subscription lapses (`lapsed: true`) or is renewed.
    package func setSubscription(of username: String, lapsed: Bool) {
        for index in subscribers.indices where subscribers[index].username == username { subscribers[index].lapsed = lapsed }
    }

    private func issueToken(_ providerID: String, _ username: String) -> String {
        let token = Base64URL.encode(random.bytes(18))
        remember(token)
        subscriptionTokens[token] = (providerID, username, true)
        return token
    }

    private func takeFault(_ id: String) -> ProgrammerAnswer? {
        guard let fault = programmerFaults[id] else { return nil }
        if !fault.untilHealed { programmerFaults[id] = nil }
        switch fault.fault {
        case .status(let status): return .http(status: status, contentType: "text/plain", body: Array("HTTP \(status)\n".utf8))
        case .garbage: return .http(status: 200, contentType: "text/html", body: Array("<html><body>maintenance".utf8))
        case .notAnObject: return Self.xml("<unexpected/>")
        case .noAnswer: return .noAnswer
        }
    }

    private static let invalidToken = xml(#"<error status="invalidtoken" message="The token is not valid."/>"#)

    private static func xml(_ text: String, status: Int = 200) -> ProgrammerAnswer {
        .http(status: status, contentType: "application/xml", body: Array(#"<?xml version="1.0" encoding="UTF-8"?>"#.utf8) + Array(text.utf8))
    }

}
