/// Replaces secrets with stable placeholders such as `<state#1>` or `<authn#2>`: the same value
/// always gets the same placeholder within one trace, numbered per kind by first appearance.
///
/// Placeholders double as values on replay: the replayer feeds `<state#1>` to the machine as the
/// state itself, so a correct engine produces the same placeholders again (a value derived from a
/// secret, such as the PKCE challenge, is numbered by appearance the same way).
public struct SecretBook: Sendable {
    /// The kinds of secret and where they appear.
    public enum Kind: String, Sendable, CaseIterable {
        /// A flow's redirect `state`.
        case state
        /// A one-time login `code`.
        case code
        /// A PKCE `code_challenge` (derived from the verifier).
        case challenge
        /// A PKCE verifier.
        case verifier
        /// An authentication token.
        case authn
        /// An authorization token.
        case authz
        /// A media token.
        case media
        /// A platform SSO assertion.
        case assertion
        /// A second-screen registration code.
        case regcode
    }

    /// Query parameters whose values are secrets, and their kinds.
    static let urlParameters: [String: Kind] = [
        "state": .state, "code": .code, "code_challenge": .challenge, "code_verifier": .verifier,
    ]

    private var placeholders: [String: String] = [:]
    private var counts: [Kind: Int] = [:]

    /// Creates an empty book.
    public init() {}

    /// The placeholder for `value` (assigned on first sight); a placeholder stays itself; an empty
    /// value stays empty.
    public mutating func conceal(_ value: String, as kind: Kind) -> String {
        guard !value.isEmpty, !Self.isPlaceholder(value) else { return value }
        if let known = placeholders[value] { return known }
        counts[kind, default: 0] += 1
        let placeholder = "<\(kind.rawValue)#\(counts[kind]!)>"
        placeholders[value] = placeholder
        return placeholder
    }

    /// `url` with the values of its secret parameters (in the query and the fragment) concealed.
    /// Lenient: duplicated or malformed parameters are kept as they are, only secrets change, so
    /// a refused URL is still refused for the same reason on replay.
    public mutating func concealURL(_ url: String) -> String {
        var base = Substring(url)
        var fragment: Substring?
        if let hash = base.firstIndex(of: "#") {
            fragment = base[base.index(after: hash)...]
            base = base[..<hash]
        }
        var result: String
        if let mark = base.firstIndex(of: "?") {
            result = String(base[..<mark]) + "?" + concealPairs(base[base.index(after: mark)...])
        } else {
            result = String(base)
        }
        if let fragment { result += "#" + concealPairs(fragment) }
        return result
    }

    private mutating func concealPairs(_ text: Substring) -> String {
        text.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = pair[..<equals], raw = pair[pair.index(after: equals)...]
            guard let kind = Self.urlParameters[(try? PercentEncoding.decode(name)) ?? String(name)],
                let value = try? PercentEncoding.decode(raw)
            else { return String(pair) }
            return name + "=" + conceal(value, as: kind)
        }.joined(separator: "&")
    }

    /// True for `<kind#n>`.
    public static func isPlaceholder(_ text: String) -> Bool {
        guard text.hasPrefix("<"), text.hasSuffix(">"), let hash = text.firstIndex(of: "#") else { return false }
        let kind = text[text.index(after: text.startIndex)..<hash]
        let number = text[text.index(after: hash)..<text.index(before: text.endIndex)]
        return Kind(rawValue: String(kind)) != nil && !number.isEmpty && number.allSatisfy(\.isNumber)
    }

    /// `url` with every placeholder percent-encoded, so it can be parsed as a URL on replay.
    public static func encodePlaceholders(inURL url: String) -> String {
        var out = ""
        var rest = Substring(url)
        while let open = rest.firstIndex(of: "<") {
            out += rest[..<open]
            if let close = rest[open...].firstIndex(of: ">"), isPlaceholder(String(rest[open...close])) {
                out += PercentEncoding.encode(String(rest[open...close]))
                rest = rest[rest.index(after: close)...]
            } else {
                out += "<"
                rest = rest[rest.index(after: open)...]
            }
        }
        return out + rest
    }
}
