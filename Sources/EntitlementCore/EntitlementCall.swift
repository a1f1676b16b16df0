/// One public call with its arguments, as the machine receives it.
public enum EntitlementCall: Sendable, Hashable {
    /// `setRequestor(_:serviceProviders:)`.
    case setRequestor(requestorID: String, serviceProviders: [String])
    /// `checkAuthentication()`.
    case checkAuthentication
    /// `getAuthentication(forceAuthn:data:)`.
    case getAuthentication(forceAuthn: Bool, data: [String: String])
    /// `setSelectedProvider(_:)`; nil cancels.
    case setSelectedProvider(String?)
    /// `handleExternalURL(_:)` with the raw URL (a secret: it carries code and state).
    case handleExternalURL(String)
    /// `getSelectedProvider()`.
    case getSelectedProvider
    /// `checkAuthorization(_:data:)`.
    case checkAuthorization(resource: String, data: [String: String])
    /// `getAuthorization(_:data:)`.
    case getAuthorization(resource: String, data: [String: String])
    /// `checkPreauthorizedResources(_:cache:)`.
    case checkPreauthorizedResources([String], cache: Bool)
    /// `getMetadata(_:)`.
    case getMetadata(MetadataKey)
    /// `logout()`.
    case logout
    /// `signIn(provider:credentials:)`: sign in to a provider of the chain that takes credentials (a
    /// direct subscription); the credentials are secrets, used once and never stored.
    case signIn(provider: String, credentials: [String: String])
    /// `signOut(provider:)`: sign out of that provider (the credentials kept for good stay).
    case signOut(provider: String)
    /// `completeStepUp(_:succeeded:)`: the app performed (or gave up) the step-up `stepUpRequired`
    /// asked for; answered with the authorization it joins (`setToken` or `tokenRequestFailed`).
    case completeStepUp(resource: String, succeeded: Bool)

    /// The call's name as the cookbook writes it.
    public var name: String { transitionInput.rawValue }

    /// The names of all calls.
    package static let names: Set<String> = Set(TransitionInput.allCases.filter(\.isCall).map(\.rawValue))

    /// The call in cookbook notation with secrets shortened (safe for logs and transcripts).
    public var redactedDescription: String {
        switch self {
        case .setRequestor(let requestor, let providers):
            providers.isEmpty ? "setRequestor(\"\(requestor)\")" : "setRequestor(\"\(requestor)\", \(providers))"
        case .checkAuthentication: "checkAuthentication()"
        case .getAuthentication(let force, let data):
            force || !data.isEmpty ? "getAuthentication(forceAuthn: \(force), data: \(data))" : "getAuthentication()"
        case .setSelectedProvider(let id): "setSelectedProvider(\(id.map { "\"\($0)\"" } ?? "nil"))"
        case .handleExternalURL(let url): "handleExternalURL(\"\(Redactor.redact(url))\")"
        case .getSelectedProvider: "getSelectedProvider()"
        case .checkAuthorization(let resource, _): "checkAuthorization(\"\(resource)\")"
        case .getAuthorization(let resource, _): "getAuthorization(\"\(resource)\")"
        case .checkPreauthorizedResources(let resources, let cache):
            "checkPreauthorizedResources(\(resources), cache: \(cache))"
        case .getMetadata(let key): "getMetadata(\(key))"
        case .logout: "logout()"
        case .signIn(let provider, let credentials):
            "signIn(provider: \"\(provider)\", credentials: [\(credentials.keys.sorted().map { "\($0): …" }.joined(separator: ", "))])"
        case .signOut(let provider): "signOut(provider: \"\(provider)\")"
        case .completeStepUp(let resource, let succeeded): "completeStepUp(\"\(resource)\", succeeded: \(succeeded))"
        }
    }
}

extension EntitlementCall: CustomStringConvertible, CustomDebugStringConvertible {
    /// ``redactedDescription``: a call printed names no module and shows no secret.
    public var description: String { redactedDescription }
    /// ``redactedDescription``.
    public var debugDescription: String { redactedDescription }
}
