import EntitlementSupport

/// Shortens secrets for logs, transcripts, status messages and reports: never prints one in clear.
///
/// ``redact(_:)`` is the one redaction every text shown to people goes through — URLs and free
/// text alike. It bounds the cost first (only the first `maximumLength` bytes are looked at and
/// kept), then shortens the value of every secret parameter however it is written (see
/// `secretParameters`), then escapes control, separator and invisible formatting characters so a
/// log line stays one honest line.
public enum Redactor {
    /// Parameter names whose values are secrets (matched in any letter case and any percent-encoding).
    package static let secretParameters: Set<String> = Set(SecretSpans.names)

    /// The most bytes of one text that are looked at and kept; the rest is counted, not shown.
    package static let maximumLength = 2048

    /// Values shorter than this are shown as a bare ellipsis: four characters of an 8-character
    /// session code would be half of it.
    package static let shortestShown = 16

    /// The first four characters and an ellipsis (enough to tell long values apart in a
    /// transcript), or only the ellipsis for a value shorter than `shortestShown`.
    public static func shorten(_ secret: String) -> String {
        secret.count < shortestShown ? "…" : String(secret.prefix(4)) + "…"
    }

    /// `text` (a URL or any message) with every secret parameter's value shortened, bounded in
    /// length and with control and invisible characters escaped.
    public static func redact(_ text: String) -> String {
        let total = text.utf8.count
        // Most messages are printable ASCII without a delimiter any secret needs, and fit: they are
        // returned as they are.
        if total <= maximumLength, text.utf8.withContiguousStorageIfAvailable({ isPlain($0) }) == true { return text }
        let bytes = Array(text.utf8.prefix(maximumLength))
        let out = SecretSpans.replacing(in: bytes) { span in
            // A trace placeholder (`<state#1>`) is not a secret: it stays readable.
            SecretBook.isPlaceholder(String(decoding: span.value, as: UTF8.self)) ? span.value : shortened(span.value)
        }
        var result = escapingHazards(String(decoding: out, as: UTF8.self))
        if total > bytes.count { result += "… (\(total - bytes.count) more bytes)" }
        return result
    }

    /// A secret value as shown: up to four leading URL-safe characters, then an ellipsis.
    private static func shortened(_ value: [UInt8]) -> [UInt8] {
        let visible = value.prefix { PercentEncoding.isUnreserved($0) }
        return (value.count < shortestShown ? [] : Array(visible.prefix(4))) + Array("…".utf8)
    }

    /// Control characters, separators, bidirectional controls and the byte-order mark as `\u{…}`.
    static func escapingHazards(_ text: String) -> String {
        // Most text has none: it is returned as it is, not copied scalar by scalar. Every hazard is a
        // control byte or beyond ASCII, so printable ASCII is looked at byte by byte only.
        if text.utf8.withContiguousStorageIfAvailable({ $0.allSatisfy(isPrintableASCII) }) == true { return text }
        guard text.unicodeScalars.contains(where: isHazard) else { return text }
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if isHazard(scalar) {
                out.append(contentsOf: "\\u{\(String(value, radix: 16, uppercase: true))}".unicodeScalars)
            } else {
                out.append(scalar)
            }
        }
        return String(out)
    }

    /// Whether `bytes` are printable ASCII (no hazard) and hold no secret (``SecretSpans``).
    private static func isPlain(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        bytes.allSatisfy(isPrintableASCII) && !SecretSpans.mayHoldSecrets(bytes)
    }

    /// A byte of printable ASCII: every hazard is a control byte or beyond ASCII.
    private static func isPrintableASCII(_ byte: UInt8) -> Bool { byte >= 0x20 && byte < 0x7F }

    /// A control character, a separator, a bidirectional control or the byte-order mark.
    private static func isHazard(_ scalar: Unicode.Scalar) -> Bool {
        let value = scalar.value
        return value < 0x20 || (0x7F...0x9F).contains(value) || (0x200B...0x200F).contains(value)
            || (0x2028...0x202E).contains(value) || (0x2060...0x206F).contains(value) || value == 0xFEFF
    }
}
