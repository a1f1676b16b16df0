import EntitlementEngine
import EntitlementSimulator

/// A value observed at run time: an argument of a callback, or a captured `$name`.
package indirect enum ScenarioValue: Sendable, Hashable, CustomStringConvertible {
    /// Text (numbers and booleans are written as text too).
    case text(String)
    /// nil.
    case none
    /// A list.
    case list([ScenarioValue])

    /// The value as a script would write it.
    package var description: String {
        switch self {
        case .text(let text): Self.quote(text)
        case .none: "nil"
        case .list(let items): "[" + items.map(\.description).joined(separator: ", ") + "]"
        }
    }

    /// Tokens, codes and states are long runs of base64url text mixing lower case, upper case and
    /// digits; error codes, ids and sentences are not.
    static func looksSecret(_ text: String) -> Bool {
        // An HTTP credential (a provider's edition credentials): `Basic …`, `Bearer …`.
        for scheme in ["Basic ", "Bearer "] where text.hasPrefix(scheme) && text.count > scheme.count + 8 { return true }
        let token =
            text.count >= 20
            && text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
            && text.contains(where: \.isLowercase) && text.contains(where: \.isUppercase) && text.contains(where: \.isNumber)
        // A REST API V2 session code (the second screen's registration code): 8 characters without look-alikes.
        let sessionCode = text.count == 8 && text.allSatisfy { "ABCDEFGHJKLMNPQRSTUVWXYZ23456789".contains($0) }
            && text.contains(where: \.isNumber)
        return token || sessionCode
    }

    /// `text` in double quotes with `\`, `"`, newline and tab escaped, as scripts write strings.
    static func quote(_ text: String) -> String {
        var out = "\""
        for character in text {
            switch character {
            case "\\": out += "\\\\"
            case "\"": out += "\\\""
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            default: out.append(character)
            }
        }
        return out + "\""
    }

    /// The value with secrets shortened, for reports (secrets never reach logs in clear).
    package var redactedDescription: String {
        switch self {
        case .text(let text) where text.contains("://"): Self.quote(Redactor.redact(text))
        case .text(let text) where Self.looksSecret(text): Self.quote(Redactor.shorten(text))
        case .text, .none: description
        case .list(let items): "[" + items.map(\.redactedDescription).joined(separator: ", ") + "]"
        }
    }
}

/// A callback (or a refused `setOptions`) as scripts see it: a name and its arguments.
package struct ObservedCallback: Sendable, Hashable {
    /// The callback name.
    package var name: String
    /// Its arguments, in script order.
    package var arguments: [ScenarioValue]
    /// The callback in script notation (`setToken "medi…" "news"`), secrets shortened, for reports.
    package var redactedDescription: String {
        ([name] + arguments.map(\.redactedDescription)).joined(separator: " ")
    }

    /// The script view of `callback`.
    package init(_ callback: Callback) {
        name = callback.name
        func list(_ items: [String]) -> ScenarioValue { .list(items.map(ScenarioValue.text)) }
        switch callback {
        case .setRequestorComplete(let success): arguments = [.text(success ? "success" : "failure")]
        case .displayProviderDialog(let mvpds): arguments = [list(mvpds.map(\.id))]
        case .setAuthenticationStatus(let status, let code): arguments = [.text(String(status)), .text(code)]
        case .navigateToUrl(let url): arguments = [.text(url)]
        case .sendTrackingData(let event, let data): arguments = [.text(event.rawValue), list(data)]
        case .setToken(let token, let resource): arguments = [.text(token), .text(resource)]
        case .tokenRequestFailed(let resource, let code, let description):
            arguments = [.text(resource), .text(code), .text(description)]
        case .selectedProvider(let mvpd): arguments = [mvpd.map { .text($0.id) } ?? .none]
        case .setMetadataStatus(let value, let encrypted, let key):
            let shown: ScenarioValue
            switch value {
            case .text(let text)?: shown = .text(text)
            case .list(let items)?: shown = list(items)
            case nil: shown = .none
            }
            arguments = [.text(ScenarioText.metadataKey(key)), shown, .text(String(encrypted))]
        case .preauthorizedResources(let resources): arguments = [list(resources)]
        case .presentTvProviderDialog(let dialog), .dismissTvProviderDialog(let dialog): arguments = [.text(dialog.id)]
        case .status(let report): arguments = [.text(report.code), .text(report.level.rawValue), .text(report.message)]
        case .entitlementsChanged(let providers): arguments = [list(providers)]
        case .providerSignInStatus(let provider, let signedIn, let code, let message):
            arguments = [.text(provider), .text(signedIn ? "1" : "0"), .text(code), .text(message)]
        case .stepUpRequired(let resource, let advice):
            arguments = [.text(resource), .text(advice.kind.rawValue), .text(advice.value)]
        }
    }

    /// A backend request as a `⇢` line sees it: `⇢ authorize` and its arguments.
    package init(_ request: BackendRequest) {
        name = ScenarioText.requestName(request.operation)
        switch request {
        case .configuration, .profiles: arguments = []
        case .createSession(_, let mvpd, _, _), .profile(_, let mvpd), .logout(_, let mvpd, _): arguments = [.text(mvpd)]
        case .resumeSession(_, let code, let mvpd, _, _): arguments = [.text(code), .text(mvpd)]
        case .profileByCode(_, let code), .session(_, let code): arguments = [.text(code)]
        case .partnerProfile(_, let partner, _), .partnerSession(_, let partner, _, _): arguments = [.text(partner)]
        case .authorize(_, _, let resource): arguments = [.text(resource)]
        case .preauthorize(_, _, let resources): arguments = [.list(resources.map(ScenarioValue.text))]
        }
    }

    /// What the ledger recorded, as a script sees it.
    package init(_ entry: CallLedger.Entry) {
        switch entry {
        case .callback(let callback): self.init(callback)
        case .backendRequest(let request): self.init(request)
        case .providerRequest(let provider, let request): self.init(provider: provider, request)
        }
    }

    /// A request to a provider of the chain as a `⇢ provider` line sees it: the provider, the request's
    /// name and, for credentials, the resource.
    package init(provider: String, _ request: ProviderRequest) {
        name = ScenarioText.providerRequestName
        arguments = [.text(provider), .text(request.name)]
        if case .credentials(let resource) = request { arguments.append(.text(resource)) }
    }

    /// The pseudo-callback for a `setOptions` that threw.
    package init(optionsRefused keys: [String]) {
        name = "optionsRefused"
        arguments = [.list(keys.map(ScenarioValue.text))]
    }
}
