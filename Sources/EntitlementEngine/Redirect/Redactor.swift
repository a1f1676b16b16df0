/// Shortens secrets for logs, transcripts and status messages: never prints one in clear.
public enum Redactor {
    /// Query parameter names whose values are secrets.
    public static let secretParameters: Set<String> = [
        "code", "state", "code_challenge", "code_verifier", "token", "password", "assertion", "session", "logout",
    ]

    /// The first four characters and an ellipsis: enough to tell values apart in a transcript.
    public static func shorten(_ secret: String) -> String {
        secret.count <= 4 ? "…" : String(secret.prefix(4)) + "…"
    }

    /// The URL with the value of every secret query parameter shortened.
    public static func redactURL(_ url: String) -> String {
        guard let mark = url.firstIndex(of: "?") else { return url }
        let query = url[url.index(after: mark)...].split(separator: "&", omittingEmptySubsequences: false).map {
            pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals]
            let value = pair[pair.index(after: equals)...]
            if secretParameters.contains(String(name)) { return name + "=" + shorten(String(value)) }
            // A URL nested in a parameter (a redirect chain's `continue=`) is redacted too.
            if let nested = try? PercentEncoding.decode(value), nested.contains("?") {
                return name + "=" + PercentEncoding.encode(redactURL(nested))
            }
            return String(pair)
        }
        return url[..<mark] + "?" + query.joined(separator: "&")
    }
}
