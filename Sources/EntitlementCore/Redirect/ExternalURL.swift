import EntitlementSupport

/// An external URL handed to `handleExternalURL`, parsed once, strictly, into a typed value.
///
/// Parsing works on the UTF-8 bytes: every delimiter (`?`, `&`, `=`, `#`) is an ASCII byte, so a
/// combining mark or any other character after it can never hide it. The part before `?` is kept
/// byte for byte so it can be compared exactly with the configured redirect URL (RFC 3986 §6.2.1
/// simple string comparison). Query parameters are percent-decoded, names too: `c%6Fde` *is*
/// `code`, for the checks and for a duplicate. A parameter given twice (however spelled), a
/// malformed escape, a fragment, raw characters outside ASCII (RFC 3986 URLs carry them
/// percent-encoded), whitespace, control characters (raw, or percent-encoded: an
/// encoded space is the only whitespace a decoded value may hold),
/// Unicode line and paragraph separators, bidirectional controls or a byte-order mark make the
/// whole URL a refusal (items 7 and 8 of the redirect checklist in the article *Redirect security*).
package struct ExternalURL: Sendable, Equatable {
    /// The longest external URL accepted, in bytes.
    package static let maximumLength = 8192

    /// Everything before the first `?`, unmodified.
    package let base: String
    /// The query as received (after the first `?`), unmodified; empty when there is none.
    package let query: String
    /// The decoded query parameters, each name at most once.
    package let parameters: [String: String]

    /// Parses `raw`, refusing anything ambiguous.
    package static func parse(_ raw: String) throws(RedirectRefusal) -> ExternalURL {
        let bytes = Array(raw.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength else { throw .malformedURL("empty or longer than \(maximumLength) bytes") }
        guard !UnicodeHazards.containsHazard(bytes[...]) else {
            throw .malformedURL("contains whitespace, control characters or invisible formatting characters")
        }
        guard bytes.allSatisfy({ $0 < 0x80 }) else {
            throw .malformedURL("contains characters outside ASCII; a URL carries them percent-encoded (RFC 3986)")
        }
        guard !bytes.contains(UInt8(ascii: "#")) else { throw .malformedURL("a fragment is not allowed") }
        let mark = bytes.firstIndex(of: UInt8(ascii: "?"))
        let base = bytes[..<(mark ?? bytes.endIndex)]
        let query = mark.map { bytes[($0 + 1)...] } ?? []
        guard let schemeEnd = firstRange(of: schemeSeparator, in: base), schemeEnd > base.startIndex else {
            throw .malformedURL("no scheme")
        }
        var parameters: [String: String] = [:]
        if !query.isEmpty {
            parameters.reserveCapacity(min(16, query.reduce(1) { $1 == UInt8(ascii: "&") ? $0 + 1 : $0 }))
            var pairStart = query.startIndex
            while pairStart <= query.endIndex {
                let pairEnd = query[pairStart...].firstIndex(of: UInt8(ascii: "&")) ?? query.endIndex
                let pair = query[pairStart..<pairEnd]
                pairStart = pairEnd + 1
                guard !pair.isEmpty else { throw .malformedURL("empty query parameter") }
                let equals = pair.firstIndex(of: UInt8(ascii: "="))
                let name = try decode(pair[..<(equals ?? pair.endIndex)])
                let value = try equals.map { (index: Int) throws(RedirectRefusal) -> String in try decode(pair[(index + 1)...]) } ?? ""
                guard !name.isEmpty else { throw .malformedURL("empty parameter name") }
                guard parameters[name] == nil else { throw .duplicateParameter(name) }
                parameters[name] = value
            }
        }
        return ExternalURL(
            base: String(decoding: base, as: UTF8.self), query: String(decoding: query, as: UTF8.self), parameters: parameters)
    }

    /// Whether this URL returns to `redirectURL`: the same base, byte for byte, and — when the
    /// configured redirect URL has a query of its own — that query first, byte for byte, then the
    /// flow's parameters after an `&`.
    package func returns(to redirectURL: String) -> Bool {
        guard let mark = redirectURL.utf8.firstIndex(of: UInt8(ascii: "?")) else { return base == redirectURL }
        let configuredBase = String(redirectURL[..<mark])
        let configuredQuery = String(redirectURL[redirectURL.utf8.index(after: mark)...])
        guard base == configuredBase, query.utf8.starts(with: configuredQuery.utf8) else { return false }
        let rest = query.utf8.dropFirst(configuredQuery.utf8.count)
        return rest.isEmpty || rest.first == UInt8(ascii: "&")
    }

    private static let schemeSeparator = Array("://".utf8)

    /// A percent-decoded name or value; decoded control characters are refused like raw ones.
    private static func decode(_ bytes: ArraySlice<UInt8>) throws(RedirectRefusal) -> String {
        // Without an escape the bytes are the text, and ``parse(_:)`` has refused every hazard in them.
        guard bytes.contains(UInt8(ascii: "%")) else { return String(decoding: bytes, as: UTF8.self) }
        let text: String
        do throws(PercentEncoding.DecodingError) {
            text = try PercentEncoding.decode(bytes: bytes)
        } catch {
            throw .malformedURL(error == .badEscape ? "bad percent escape" : "not UTF-8")
        }
        guard !UnicodeHazards.containsHazard(Array(text.utf8)[...], spaceAllowed: true) else {
            throw .malformedURL("a parameter decodes to control or invisible formatting characters")
        }
        return text
    }

    private static func firstRange(of needle: [UInt8], in haystack: ArraySlice<UInt8>) -> Int? {
        needle.withUnsafeBufferPointer { needle in
            haystack.withUnsafeBufferPointer { ByteSearch.firstOffset(of: needle, in: $0) }
        }.map { haystack.startIndex + $0 }
    }
}
