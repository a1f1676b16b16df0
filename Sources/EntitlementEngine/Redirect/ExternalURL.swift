/// An external URL handed to `handleExternalURL`, parsed once, strictly, into a typed value.
///
/// The part before `?` is kept byte for byte so it can be compared exactly with the configured
/// redirect URL (RFC 3986 §6.2.1 simple string comparison). Query parameters are decoded; a
/// parameter given twice, a malformed escape, a fragment, whitespace or control characters make
/// the whole URL a refusal (security checklist A.5 items 7 and 8).
public struct ExternalURL: Sendable, Equatable {
    /// The longest external URL accepted, in bytes.
    public static let maximumLength = 8192

    /// Everything before the first `?`, unmodified.
    public let base: String
    /// The decoded query parameters, each name at most once.
    public let parameters: [String: String]

    /// Parses `raw`, refusing anything ambiguous.
    public static func parse(_ raw: String) throws(RedirectRefusal) -> ExternalURL {
        guard !raw.isEmpty, raw.utf8.count <= maximumLength else { throw .malformedURL("empty or longer than \(maximumLength) bytes") }
        guard !raw.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else {
            throw .malformedURL("contains whitespace or control characters")
        }
        guard !raw.contains("#") else { throw .malformedURL("a fragment is not allowed") }
        let base: Substring
        let query: Substring?
        if let mark = raw.firstIndex(of: "?") {
            base = raw[..<mark]
            query = raw[raw.index(after: mark)...]
        } else {
            base = raw[...]
            query = nil
        }
        guard let schemeEnd = base.firstRange(of: "://"), schemeEnd.lowerBound != base.startIndex else {
            throw .malformedURL("no scheme")
        }
        var parameters: [String: String] = [:]
        if let query, !query.isEmpty {
            for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
                guard !pair.isEmpty else { throw .malformedURL("empty query parameter") }
                let name: String, value: String
                do throws(PercentEncoding.DecodingError) {
                    if let equals = pair.firstIndex(of: "=") {
                        name = try PercentEncoding.decode(pair[..<equals])
                        value = try PercentEncoding.decode(pair[pair.index(after: equals)...])
                    } else {
                        name = try PercentEncoding.decode(pair)
                        value = ""
                    }
                } catch {
                    throw .malformedURL(error == .badEscape ? "bad percent escape" : "not UTF-8")
                }
                guard !name.isEmpty else { throw .malformedURL("empty parameter name") }
                guard parameters[name] == nil else { throw .duplicateParameter(name) }
                parameters[name] = value
            }
        }
        return ExternalURL(base: String(base), parameters: parameters)
    }
}
