/// What the engine asks a provider of the chain (`Action.askProvider(_:provider:_:_:)`).
public enum ProviderRequest: Sendable, Hashable {
    /// The credentials for a resource.
    case credentials(resource: String)
    /// What the user may access now.
    case verify
    /// Sign in with what the user typed (secrets: never stored, logged or traced).
    case signIn([String: String])
    /// A new user token for the one the service called invalid.
    case renew
    /// Sign out (best effort: the answer changes nothing).
    case signOut

    /// The request for logs: its name and resource, never a credential.
    public var redactedDescription: String {
        if case .credentials(let resource) = self { return "credentials for \(resource)" }
        return name
    }

    /// The request's name in traces and logs.
    public var name: String {
        switch self {
        case .credentials: "credentials"
        case .verify: "verify"
        case .signIn: "signIn"
        case .renew: "renew"
        case .signOut: "signOut"
        }
    }
}

/// A provider's answer (`Input.providerAnswered(_:_:)`).
public enum ProviderAnswer: Sendable, Hashable {
    /// To ``ProviderRequest/credentials(resource:)``.
    case credentials(Result<ProviderCredentials, ProviderFailure>)
    /// To ``ProviderRequest/verify``.
    case verified(Result<ProviderView, ProviderFailure>)
    /// To ``ProviderRequest/signIn(_:)``: the user token.
    case signedIn(Result<String, ProviderFailure>)
    /// To ``ProviderRequest/renew``: the new user token.
    case renewed(Result<String, ProviderFailure>)
    /// To ``ProviderRequest/signOut``.
    case signedOut

    /// The answer a request that got none counts as: `failure` (its deadline passed, the network failed,
    /// no such provider), in the shape of an answer to `request`.
    public static func failed(_ request: ProviderRequest, _ failure: ProviderFailure) -> ProviderAnswer {
        switch request {
        case .credentials: .credentials(.failure(failure))
        case .verify: .verified(.failure(failure))
        case .signIn: .signedIn(.failure(failure))
        case .renew: .renewed(.failure(failure))
        case .signOut: .signedOut
        }
    }
}
