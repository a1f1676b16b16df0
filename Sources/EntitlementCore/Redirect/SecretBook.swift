import EntitlementSupport

/// Replaces secrets with stable placeholders such as `<state#1>` or `<authn#2>`: the same value
/// always gets the same placeholder within one trace, numbered per kind by first appearance.
///
/// Placeholders double as values on replay: the replayer feeds `<state#1>` to the machine as the
/// state itself, so a correct engine produces the same placeholders again (a value derived from a
/// secret is numbered by appearance the same way).
public struct SecretBook: Sendable {
    /// The kinds of secret and where they appear.
    public enum Kind: String, Sendable, CaseIterable {
        /// A flow's redirect `state`.
        case state
        /// A session's `code` (the registration code of a second-screen login too).
        case code
        /// A media token.
        case media
        /// A platform SSO assertion.
        case assertion
        /// Any other secret parameter found in a URL or message (`token`, `password`, …).
        case secret
    }

    /// Query parameters whose values are secrets, and their kinds.
    static let urlParameters: [String: Kind] = [
        "state": .state, "code": .code,
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

    /// `url` (or any text) with the value of every secret parameter concealed, however it is
    /// written (``Redactor/secretParameters``: raw or percent-encoded names and delimiters, nested
    /// URLs, the query or the fragment, any letter case). Lenient: duplicated or malformed
    /// parameters are kept as they are, only secrets change, so a refused URL is still refused for
    /// the same reason on replay.
    public mutating func concealURL(_ url: String) -> String {
        let bytes = Array(url.utf8)
        let out = SecretSpans.replacing(in: bytes) { span in
            let placeholder = conceal(String(decoding: span.value, as: UTF8.self), as: Self.urlParameters[span.name] ?? .secret)
            // A value the engine refuses keeps the reason it is refused for, so it is refused alike on replay.
            return Array((placeholder + Self.refusalMarker(bytes[span.range])).utf8)
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What makes a raw parameter value refused by ``ExternalURL/parse(_:)``, written so that it
    /// is refused for the same reason after its secret was concealed: a lone `%` (bad escape),
    /// `%FF` (not UTF-8), `%01` (a control character); empty for a value the parser accepts.
    static func refusalMarker(_ raw: ArraySlice<UInt8>) -> String {
        do throws(PercentEncoding.DecodingError) {
            let decoded = try PercentEncoding.decode(bytes: raw)
            return UnicodeHazards.containsHazard(Array(decoded.utf8)[...], spaceAllowed: true) ? "%01" : ""
        } catch {
            return error == .badEscape ? "%" : "%FF"
        }
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
