import EntitlementEngine

/// How scenario scripts write things that are not plain text: metadata keys, callback arities.
package enum ScenarioText {
    /// `TTL_AUTHN`, `TTL_AUTHZ/<resource>`, `DEVICEID`, `user/<name>`.
    package static func metadataKey(_ key: MetadataKey) -> String {
        switch key {
        case .authenticationExpiry: "TTL_AUTHN"
        case .authorizationExpiry(let resource): "TTL_AUTHZ/\(resource)"
        case .deviceID: "DEVICEID"
        case .userMetadata(let name): "user/\(name)"
        }
    }

    /// The key a script's text names, if any.
    package static func metadataKey(_ text: String) -> MetadataKey? {
        if text == "TTL_AUTHN" { return .authenticationExpiry }
        if text == "DEVICEID" { return .deviceID }
        if text.hasPrefix("TTL_AUTHZ/"), text.count > 10 { return .authorizationExpiry(resource: String(text.dropFirst(10))) }
        if text.hasPrefix("user/") { return .userMetadata(String(text.dropFirst(5))) }
        return nil
    }

    /// Each expectable callback and how many arguments it has, in script order.
    package static let arguments: [String: [String]] = [
        "setRequestorComplete": ["success|failure"],
        "displayProviderDialog": ["[mvpd ids]"],
        "setAuthenticationStatus": ["status", "errorCode"],
        "navigateToUrl": ["url"],
        "sendTrackingData": ["event", "[data]"],
        "setToken": ["token", "resource"],
        "tokenRequestFailed": ["resource", "errorCode", "errorDescription"],
        "selectedProvider": ["mvpd id|nil"],
        "setMetadataStatus": ["key", "value", "encrypted"],
        "preauthorizedResources": ["[resources]"],
        "presentTvProviderDialog": ["dialog id"],
        "dismissTvProviderDialog": ["dialog id"],
        "status": ["code", "level", "message"],
        "optionsRefused": ["[unknown keys]"],
        "entitlementsChanged": ["[provider ids]"],
        "providerSignInStatus": ["provider", "1|0", "errorCode", "message"],
        "stepUpRequired": ["resource", "transaction|authenticateToService", "value"],
    ]

    /// Each backend operation a `⇢` line can expect, and its arguments in script order.
    package static func requestArguments(_ operation: BackendOperation) -> [String] {
        switch operation {
        case .configuration, .profiles: []
        case .createSession, .profile, .logout: ["mvpd"]
        case .resumeSession: ["code", "mvpd"]
        case .session, .profileByCode: ["code"]
        case .partnerSession, .partnerProfile: ["partner"]
        case .authorize: ["resource"]
        case .preauthorize: ["[resources]"]
        }
    }

    /// The name a `⇢` expectation and a report give a request of `operation`.
    package static func requestName(_ operation: BackendOperation) -> String { "⇢ " + operation.rawValue }

    /// How scripts name a request to a provider of the chain (`⇢ provider magazine signIn`).
    package static let providerRequestName = "⇢ provider"

    /// The provider requests a `⇢ provider` line names (`credentials` takes the resource).
    package static let providerRequests = ["credentials", "verify", "signIn", "renew", "signOut"]
}
