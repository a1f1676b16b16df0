/// Adobe Pass's REST API V2 hosts, as Adobe's OpenAPI files list them (`/api/v2` and the client
/// registration's `/o` are below each). Pass one as the transport's and the client's base URL.
///
/// Adobe's checklist names two environments besides production, "Prequal-Production" and
/// "Release-Staging", and does not say which host is which; the names below follow the host names.
public enum AdobePassHost {
    /// Production: `https://sp.auth.adobe.com`.
    public static let production = "https://sp.auth.adobe.com"
    /// Pre-qualification against production: `https://sp-prequal.auth.adobe.com`.
    public static let prequalification = "https://sp-prequal.auth.adobe.com"
    /// Pre-qualification against staging: `https://sp-prequal.auth-staging.adobe.com`.
    public static let prequalificationStaging = "https://sp-prequal.auth-staging.adobe.com"
    /// Staging: `https://sp.auth-staging.adobe.com`.
    public static let staging = "https://sp.auth-staging.adobe.com"

    /// Every host, production first (the order of Adobe's files).
    package static let all = [production, prequalification, prequalificationStaging, staging]
}
