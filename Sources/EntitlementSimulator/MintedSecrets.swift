import EntitlementEngine
import EntitlementSupport
import Synchronization

/// The secrets a simulator minted — session codes, tokens, page and assertion ids, passwords — for
/// what prints requests (the simulator server's access log) to shorten by value, whatever parameter or
/// path names them and however often they are percent-encoded. Bounded: the newest ``limit`` are kept.
package final class MintedSecrets: Sendable {
    /// The most secrets kept (the oldest go first).
    package static let limit = 100_000
    /// Shorter values are not looked for (too likely to be a harmless part of a request).
    package static let shortest = 8

    private struct Book {
        var secrets: Set<String> = []
        var order: [String] = []
        var start = 0
        /// How many kept secrets have each length: the windows a text is searched with.
        var lengths: [Int: Int] = [:]

        /// Keeps `secret` if it is long enough and not kept yet, forgetting the oldest past the limit.
        mutating func keep(_ secret: String) {
            let length = secret.utf8.count
            guard length >= MintedSecrets.shortest, secrets.insert(secret).inserted else { return }
            order.append(secret)
            lengths[length, default: 0] += 1
            guard secrets.count > MintedSecrets.limit else { return }
            let oldest = order[start]
            start += 1
            secrets.remove(oldest)
            let oldestLength = oldest.utf8.count
            let left = (lengths[oldestLength] ?? 1) - 1
            lengths[oldestLength] = left > 0 ? left : nil
            if start >= MintedSecrets.limit {
                order.removeFirst(start)
                start = 0
            }
        }
    }

    private let book = Mutex(Book())

    /// An empty book.
    package init() {}

    /// How many secrets are kept.
    package var count: Int { book.withLock { $0.secrets.count } }

    /// Keeps `secret`, and each part of it between delimiters (a `Basic` credential's token), that is at
    /// least ``shortest`` bytes long.
    package func insert(_ secret: String) {
        let bytes = secret.utf8
        let parts = bytes.contains(where: Self.isDelimiter) ? bytes.split(whereSeparator: Self.isDelimiter).map { String(decoding: $0, as: UTF8.self) } : []
        book.withLock { book in
            book.keep(secret)
            for part in parts { book.keep(part) }
        }
    }

    /// `text` with every kept secret in it — as it is, or percent-encoded up to three times over — shortened
    /// (`Redactor.shorten`); a text that still holds one once shortened (a secret split by an
    /// escape) is not shown at all.
    package func redacting(_ text: String) -> String {
        let forms = Self.decodings(text)
        let found: Set<String> = book.withLock { book in
            guard !book.secrets.isEmpty else { return [] }
            var found: Set<String> = []
            for form in forms {
                for run in form.split(whereSeparator: Self.isDelimiter) {
                    for length in book.lengths.keys where length <= run.count {
                        for start in 0...(run.count - length) {
                            let window = String(decoding: run[run.startIndex + start..<run.startIndex + start + length], as: UTF8.self)
                            if book.secrets.contains(window) { found.insert(window) }
                        }
                    }
                }
            }
            return found
        }
        guard !found.isEmpty else { return text }
        var shown = text
        for secret in found.sorted(by: { $0.utf8.count > $1.utf8.count }) {
            var encoded = secret
            for _ in 0..<3 {
                shown = shown.replacing(encoded, with: Redactor.shorten(secret))
                encoded = PercentEncoding.encode(encoded)
            }
        }
        let left = Self.decodings(shown)
        guard !found.contains(where: { secret in left.contains { String(decoding: $0, as: UTF8.self).contains(secret) } }) else {
            return "(a request that holds a secret the simulator minted, not shown)"
        }
        return shown
    }

    /// `text`'s bytes, then percent-decoded once, twice, three times (while an escape is left).
    private static func decodings(_ text: String) -> [[UInt8]] {
        var forms = [Array(text.utf8)]
        while forms.count < 4, let last = forms.last, last.contains(UInt8(ascii: "%")) {
            forms.append(PercentEncoding.decodeLeniently(last))
        }
        return forms
    }

    /// A byte no minted secret holds: it ends a run a secret is looked for in.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "&"), UInt8(ascii: "="), UInt8(ascii: "#"), UInt8(ascii: ";"),
            UInt8(ascii: ","), UInt8(ascii: " "), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: ":"), UInt8(ascii: "@"),
            UInt8(ascii: "%"):
            true
        default: byte < 0x20 || byte == 0x7F
        }
    }
}
