/// One delegate callback as a value: what `AccessEnabler.callbacks(bufferLimit:)` streams yield and what
/// tests and transcripts compare. Cases and labels follow the cookbook's callback names.
public enum Callback: Sendable, Hashable {
    /// `setRequestorComplete(status)`: configuration finished (`success`) or failed.
    case setRequestorComplete(success: Bool)
    /// `displayProviderDialog(mvpds)`: the app shows a picker and answers with `setSelectedProvider`.
    case displayProviderDialog([MVPD])
    /// `setAuthenticationStatus(status, errorCode)`: 1 with `""`, or 0 with an ``ErrorCode``.
    case setAuthenticationStatus(status: Int, errorCode: String)
    /// `navigateToUrl(url)`: the app opens the login or logout URL in a web view.
    case navigateToUrl(String)
    /// `sendTrackingData(event, data)`.
    case sendTrackingData(TrackingEvent, [String])
    /// `setToken(token, resource)`: a fresh short-lived media token.
    case setToken(token: String, resource: String)
    /// `tokenRequestFailed(resource, code, description)`.
    case tokenRequestFailed(resource: String, errorCode: String, errorDescription: String)
    /// `selectedProvider(mvpd)`: nil when none is selected.
    case selectedProvider(MVPD?)
    /// `setMetadataStatus(metadata, encrypted, key)`: nil metadata when there is no answer.
    case setMetadataStatus(MetadataValue?, encrypted: Bool, key: MetadataKey)
    /// `preauthorizedResources(resources)`: the authorized subset, in the caller's order.
    case preauthorizedResources([String])
    /// `presentTvProviderDialog(dialog)`: present the platform's provider picker (cookbook D).
    case presentTvProviderDialog(TvProviderDialog)
    /// `dismissTvProviderDialog(dialog)`: close the platform's provider picker (cookbook D).
    case dismissTvProviderDialog(TvProviderDialog)
    /// `status(report)`: refusals, configuration errors, notices.
    case status(StatusReport)
    /// `entitlementsChanged(providers)`: what the user may access changed with these links of the
    /// provider chain (in chain order; `tv-provider` for a login or logout): refresh what the app shows.
    /// Only with a `ProviderChain`; it answers no call.
    case entitlementsChanged([String])
    /// `providerSignInStatus(provider, signedIn, errorCode, message)`: the answer to `signIn` and
    /// `signOut` — signed in or not, the code and message of a failure, or the provider's message for
    /// the user ("Gold subscriber until March") on success. A sign-in that fails while the user is
    /// already signed in changes nothing: signed in, with the failure's code and message.
    case providerSignInStatus(provider: String, signedIn: Bool, errorCode: String, message: String)
    /// `stepUpRequired(resource, advice)`: before `resource` is granted, the user must step up (a PIN,
    /// a stronger sign-in); the app answers with `completeStepUp(resource:succeeded:)`. It answers no call.
    case stepUpRequired(resource: String, advice: StepUpAdvice)

    /// The callback's cookbook name.
    public var name: String {
        switch self {
        case .setRequestorComplete: "setRequestorComplete"
        case .displayProviderDialog: "displayProviderDialog"
        case .setAuthenticationStatus: "setAuthenticationStatus"
        case .navigateToUrl: "navigateToUrl"
        case .sendTrackingData: "sendTrackingData"
        case .setToken: "setToken"
        case .tokenRequestFailed: "tokenRequestFailed"
        case .selectedProvider: "selectedProvider"
        case .setMetadataStatus: "setMetadataStatus"
        case .preauthorizedResources: "preauthorizedResources"
        case .presentTvProviderDialog: "presentTvProviderDialog"
        case .dismissTvProviderDialog: "dismissTvProviderDialog"
        case .status: "status"
        case .entitlementsChanged: "entitlementsChanged"
        case .providerSignInStatus: "providerSignInStatus"
        case .stepUpRequired: "stepUpRequired"
        }
    }

    /// The callback in cookbook notation with tokens and URL secrets shortened, and personal data
    /// concealed: a metadata value (household id, zip, the user's ids) as `•••`, the user's GUID in
    /// tracking data shortened.
    public var redactedDescription: String {
        switch self {
        case .setRequestorComplete(let success): "setRequestorComplete(\(success ? "SUCCESS" : "FAILURE"))"
        case .displayProviderDialog(let mvpds): "displayProviderDialog([\(mvpds.map(\.id).joined(separator: ", "))])"
        case .setAuthenticationStatus(let status, let code): "setAuthenticationStatus(\(status), \"\(code)\")"
        case .navigateToUrl(let url): "navigateToUrl(\"\(Redactor.redact(url))\")"
        case .sendTrackingData(let event, let data): "sendTrackingData(\(event.rawValue), \(Self.concealingGUID(event, data)))"
        case .setToken(let token, let resource): "setToken(\"\(Redactor.shorten(token))\", \"\(resource)\")"
        case .tokenRequestFailed(let resource, let code, let description):
            "tokenRequestFailed(\"\(resource)\", \"\(code)\", \"\(Redactor.redact(description))\")"
        case .selectedProvider(let mvpd): "selectedProvider(\(mvpd.map { "\"\($0.id)\"" } ?? "nil"))"
        case .setMetadataStatus(let value, let encrypted, let key):
            "setMetadataStatus(\(value == nil ? "nil" : "•••"), encrypted: \(encrypted), key: \(key))"
        case .preauthorizedResources(let resources): "preauthorizedResources(\(resources))"
        case .presentTvProviderDialog(let dialog): "presentTvProviderDialog(\(dialog.id))"
        case .dismissTvProviderDialog(let dialog): "dismissTvProviderDialog(\(dialog.id))"
        case .status(let report) where report.code == "REGCODE":
            "status(REGCODE, \(report.level.rawValue), \"\(Redactor.shorten(report.message))\")"
        case .status(let report): "status(\(report.code), \(report.level.rawValue), \"\(report.message)\")"
        case .entitlementsChanged(let providers): "entitlementsChanged(\(providers))"
        case .providerSignInStatus(let provider, let signedIn, let code, let message):
            "providerSignInStatus(\"\(provider)\", \(signedIn ? 1 : 0), \"\(code)\", \"\(Redactor.redact(message))\")"
        case .stepUpRequired(let resource, let advice): "stepUpRequired(\"\(resource)\", \(advice.kind.rawValue), \"\(advice.value)\")"
        }
    }

    /// `data` with the user's GUID (personal data) shortened.
    private static func concealingGUID(_ event: TrackingEvent, _ data: [String]) -> [String] {
        guard let field = event.userGUIDField, data.indices.contains(field), !data[field].isEmpty else { return data }
        var concealed = data
        concealed[field] = Redactor.shorten(data[field])
        return concealed
    }
}

extension Callback: CustomStringConvertible, CustomDebugStringConvertible {
    /// ``redactedDescription``: a callback printed (in a log line, a failed test's message) names no
    /// module and shows no secret or personal data.
    public var description: String { redactedDescription }
    /// ``redactedDescription``.
    public var debugDescription: String { redactedDescription }
}
