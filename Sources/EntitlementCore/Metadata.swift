/// What `getMetadata` asks for (Adobe's iOS/tvOS SDK API reference). The key is echoed back in `setMetadataStatus`.
public enum MetadataKey: Sendable, Hashable, Codable, CustomStringConvertible {
    /// When the authentication token expires (`TTL_AUTHN`).
    case authenticationExpiry
    /// When the last authorization decision for a resource stops counting (`TTL_AUTHZ`).
    case authorizationExpiry(resource: String)
    /// This device's id (`DEVICEID`).
    case deviceID
    /// A user metadata value from the MVPD, by name (`zip`, `householdID`, …).
    case userMetadata(String)

    /// The key as the cookbook names it.
    public var description: String {
        switch self {
        case .authenticationExpiry: "TTL_AUTHN"
        case .authorizationExpiry(let resource): "TTL_AUTHZ(\(resource))"
        case .deviceID: "DEVICEID"
        case .userMetadata(let name): "USER_META(\(name))"
        }
    }
}

/// A metadata answer: a single text or a list (the MVPD's `zip` is a list).
public enum MetadataValue: Sendable, Hashable, Codable {
    /// One value.
    case text(String)
    /// Several values.
    case list([String])
}
