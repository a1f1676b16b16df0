import EntitlementSupport

/// Replaces secrets with stable placeholders such as `<state#1>` or `<authn#2>`: the same value
/// always gets the same placeholder within one trace, numbered per kind by first appearance.
///
/// Placeholders double as values on replay: the replayer feeds `<state#1>` to the machine as the
/// state itself, so a correct engine produces the same placeholders again (a value derived from a
/// secret is numbered by appearance the same way).
package struct SecretBook: Sendable {
    /// The kinds of secret and where they appear.
    package enum Kind: String, Sendable, CaseIterable {
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
        /// A user's data: profile attribute values, user ids, metadata values, session ids, the
        /// tracking GUID (concealed unless the book keeps personal data).
        case personal
        /// A device id (concealed unless the book keeps personal data).
        case device
    }

    /// Query parameters whose values are secrets, and their kinds.
    static let urlParameters: [String: Kind] = [
        "state": .state, "code": .code,
    ]

    private var placeholders: [String: String] = [:]
    private var counts: [Kind: Int] = [:]
    /// Whether ``concealPersonal(_:as:)`` keeps values as they are (for local debugging only).
    package let keepsPersonalData: Bool

    /// Creates an empty book; one `keepingPersonalData` conceals secrets only.
    package init(keepingPersonalData: Bool = false) {
        self.keepsPersonalData = keepingPersonalData
    }

    /// The placeholder for `value` (assigned on first sight); a placeholder stays itself (and
    /// numbering goes on after it); an empty value stays empty.
    package mutating func conceal(_ value: String, as kind: Kind) -> String {
        guard !value.isEmpty else { return value }
        if let (known, number) = Self.placeholder(value) {
            counts[known] = max(counts[known] ?? 0, number)
            return value
        }
        if let known = placeholders[value] { return known }
        counts[kind, default: 0] += 1
        let placeholder = "<\(kind.rawValue)#\(counts[kind]!)>"
        placeholders[value] = placeholder
        return placeholder
    }

    /// `value` concealed as personal data of `kind` (``Kind/personal`` or ``Kind/device``), or `value`
    /// itself when the book keeps personal data.
    package mutating func concealPersonal(_ value: String, as kind: Kind = .personal) -> String {
        keepsPersonalData ? value : conceal(value, as: kind)
    }

    /// Notes every placeholder written in `text`, so the next value of its kind is numbered after it:
    /// a replay reads the recorded placeholders this way before the machine derives new values (the
    /// tracking GUID of a concealed user id), and so numbers them as the recording did.
    package mutating func notePlaceholders(in text: String) {
        var text = text
        text.withUTF8 { bytes in
            var open = 0
            while let start = bytes[open...].firstIndex(of: UInt8(ascii: "<")) {
                open = start + 1
                guard let close = bytes[open...].firstIndex(of: UInt8(ascii: ">")) else { return }
                if let (kind, number) = Self.placeholder(inside: UnsafeBufferPointer(rebasing: bytes[open..<close])) {
                    counts[kind] = max(counts[kind] ?? 0, number)
                }
            }
        }
    }

    /// The kind and number of the placeholder whose text between `<` and `>` is `bytes` (`kind#n`).
    private static func placeholder(inside bytes: UnsafeBufferPointer<UInt8>) -> (Kind, Int)? {
        guard let hash = bytes.firstIndex(of: UInt8(ascii: "#")), hash + 1 < bytes.count,
            let kind = Kind(rawValue: String(decoding: UnsafeBufferPointer(rebasing: bytes[..<hash]), as: UTF8.self))
        else { return nil }
        var number = 0
        for byte in bytes[(hash + 1)...] {
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            let (times, overflowed) = number.multipliedReportingOverflow(by: 10)
            let (sum, overflowedAgain) = times.addingReportingOverflow(Int(byte - UInt8(ascii: "0")))
            guard !overflowed, !overflowedAgain else { return nil }
            number = sum
        }
        return (kind, number)
    }

    /// `url` (or any text) with the value of every secret parameter concealed, however it is
    /// written (`Redactor/secretParameters`: raw or percent-encoded names and delimiters, nested
    /// URLs, the query or the fragment, any letter case). Lenient: duplicated or malformed
    /// parameters are kept as they are, only secrets change, so a refused URL is still refused for
    /// the same reason on replay.
    package mutating func concealURL(_ url: String) -> String {
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
    package static func isPlaceholder(_ text: String) -> Bool { placeholder(text) != nil }

    /// The kind and number of a `<kind#n>` placeholder.
    private static func placeholder(_ text: String) -> (Kind, Int)? {
        guard text.hasPrefix("<"), text.hasSuffix(">"), let hash = text.firstIndex(of: "#") else { return nil }
        let kind = text[text.index(after: text.startIndex)..<hash]
        let digits = text[text.index(after: hash)..<text.index(before: text.endIndex)]
        guard let kind = Kind(rawValue: String(kind)), !digits.isEmpty, digits.allSatisfy({ ("0"..."9").contains($0) }), let number = Int(digits) else {
            return nil
        }
        return (kind, number)
    }

    /// `url` with every placeholder percent-encoded, so it can be parsed as a URL on replay.
    package static func encodePlaceholders(inURL url: String) -> String {
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
