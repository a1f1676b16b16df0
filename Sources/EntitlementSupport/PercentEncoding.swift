/// Percent-encoding for query components (RFC 3986 §2.1, §2.3): only unreserved characters
/// (`ALPHA / DIGIT / "-" / "." / "_" / "~"`) pass through; every other byte becomes `%XX`.
package enum PercentEncoding {
    /// Why a percent-encoded text could not be decoded.
    package enum DecodingError: Error, Sendable, Equatable {
        /// A `%` was not followed by two hexadecimal digits.
        case badEscape
        /// The decoded bytes are not valid UTF-8.
        case notUTF8
    }

    /// True for RFC 3986 unreserved bytes.
    package static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            return true
        default:
            return false
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789ABCDEF".utf8)

    /// Encodes `text` for use as a query key or value.
    package static func encode(_ text: String) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        append(text, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    /// ``encode(_:)``'s bytes appended to `out` (a URL or a form built in one buffer).
    package static func append(_ text: String, to out: inout [UInt8]) {
        let hex = hexDigits
        for byte in text.utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 15)])
            }
        }
    }

    /// Decodes `%XX` escapes strictly. `+` stays `+` (RFC 3986 gives it no special meaning).
    package static func decode(_ text: Substring) throws(DecodingError) -> String {
        try decode(bytes: Array(text.utf8)[...])
    }

    /// Decodes `%XX` escapes in UTF-8 bytes strictly; the result must be valid UTF-8.
    package static func decode(bytes text: ArraySlice<UInt8>) throws(DecodingError) -> String {
        try decode(text, plusIsSpace: false)
    }

    /// Decodes `%XX` escapes in UTF-8 bytes strictly, `+` as a space when `plusIsSpace` (a form's
    /// names and values); the result must be valid UTF-8.
    package static func decode<Bytes: Collection<UInt8>>(_ text: Bytes, plusIsSpace: Bool) throws(DecodingError) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        var index = text.startIndex
        while index != text.endIndex {
            let byte = text[index]
            text.formIndex(after: &index)
            guard byte == UInt8(ascii: "%") else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                continue
            }
            guard index != text.endIndex, let high = hexValue(text[index]) else { throw .badEscape }
            text.formIndex(after: &index)
            guard index != text.endIndex, let low = hexValue(text[index]) else { throw .badEscape }
            text.formIndex(after: &index)
            out.append(high << 4 | low)
        }
        guard let decoded = UTF8Validation.string(out) else { throw .notUTF8 }
        return decoded
    }

    /// One round of lenient decoding: valid `%XX` escapes become their byte, anything else stays as it is
    /// (for looking through encodings, never for reading a value).
    package static func decodeLeniently(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count, let high = hexValue(bytes[index + 1]),
                let low = hexValue(bytes[index + 2])
            {
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    /// The value of a hexadecimal digit byte, if it is one.
    package static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// Builds `base?k1=v1&k2=v2` with every key and value percent-encoded, in the given order.
    package static func url(_ base: String, query: [(String, String)]) -> String {
        guard !query.isEmpty else { return base }
        // Sized for the longest encoding (every byte escaped), so the URL is built in one allocation.
        var out: [UInt8] = []
        out.reserveCapacity(query.reduce(base.utf8.count + 1) { $0 + 3 * ($1.0.utf8.count + $1.1.utf8.count) + 2 })
        out.append(contentsOf: base.utf8)
        out.append(out.contains(UInt8(ascii: "?")) ? UInt8(ascii: "&") : UInt8(ascii: "?"))
        FormCoding.append(query, to: &out)
        return String(decoding: out, as: UTF8.self)
    }
}
