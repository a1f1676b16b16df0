/// One MVPD's answer in `GET /api/v2/{sp}/logout/{mvpd}`: `{"logouts": {mvpd: action}}`.
/// Adobe has already deleted the profile when it answers.
package struct V2Logout: Sendable, Hashable {
    /// What is left to do.
    package enum ActionName: V2OpenValue {
        /// Open `url` (the MVPD's logout page); it ends at the redirect URL.
        case logout
        /// Tell the user to sign out of the platform (Apple SSO).
        case partnerLogout
        /// Nothing: the logout is complete.
        case complete
        /// No valid profile was found.
        case invalid
        /// An action this engine does not know, kept as sent. Default: like ``complete`` — the local logout
        /// ends without opening a page.
        case other(String)

        /// The values this engine knows.
        package static let known: [Self] = [.logout, .partnerLogout, .complete, .invalid]

        /// The wire spelling.
        package var rawValue: String {
            switch self {
            case .logout: "logout"
            case .partnerLogout: "partner_logout"
            case .complete: "complete"
            case .invalid: "invalid"
            case .other(let value): value
            }
        }
    }

    /// How `url` is used.
    package enum ActionType: V2OpenValue {
        /// Open it in a user agent.
        case interactive
        /// Tell the user (partner SSO).
        case partnerInteractive
        /// Nothing to open.
        case none
        /// A way this engine does not know, kept as sent. Default: like ``none`` — no page is opened.
        case other(String)

        /// The values this engine knows.
        package static let known: [Self] = [.interactive, .partnerInteractive, .none]

        /// The wire spelling.
        package var rawValue: String {
            switch self {
            case .interactive: "interactive"
            case .partnerInteractive: "partner_interactive"
            case .none: "none"
            case .other(let value): value
            }
        }
    }

    /// What is left to do.
    package var actionName: ActionName
    /// How.
    package var actionType: ActionType
    /// The MVPD.
    package var mvpd: String
    /// The logout page, for ``ActionName/logout``.
    package var url: String?

    /// Creates a logout answer.
    package init(actionName: ActionName, actionType: ActionType, mvpd: String, url: String? = nil) {
        self.actionName = actionName
        self.actionType = actionType
        self.mvpd = mvpd
        self.url = url
    }

    /// Reads the `{"logouts": {…}}` answer, by MVPD.
    package static func logouts(json: JSONValue) throws(V2DecodingError) -> [String: V2Logout] {
        var logouts: [String: V2Logout] = [:]
        for (mvpd, object) in try V2Object(json).objectMap("logouts") {
            logouts[mvpd] = V2Logout(
                actionName: try object.openValue("actionName"), actionType: try object.openValue("actionType"),
                mvpd: try object.optionalString("mvpd") ?? mvpd, url: try object.optionalString("url"))
        }
        return logouts
    }

    /// Writes a logouts answer.
    package static func json(logouts: [String: V2Logout]) -> JSONValue { ["logouts": .object(logouts.mapValues(\.json))] }

    /// The action as V2 writes it.
    package var json: JSONValue {
        var members: [String: JSONValue] = [
            "actionName": .string(actionName.rawValue), "actionType": .string(actionType.rawValue), "mvpd": .string(mvpd),
        ]
        members.set("url", url.map(JSONValue.string))
        return .object(members)
    }
}
