import EntitlementSupport

/// Finds the values of secret parameters in a text — a URL, a status message, a log line — however
/// they are written: names and delimiters raw or percent-encoded (up to sixteen times over, so
/// `c%6Fde=`, `%3Fcode%3D`, a URL nested in another URL's parameter), in the query or the
/// fragment, in any letter case, or as JSON (`"code":"…"`) — and REST API V2's session codes in a
/// path (`/api/v2/authenticate/{sp}/{code}`, `/sessions/{code}`, `/profiles/code/{code}`, a second
/// screen's `/activate/{code}`, however many slashes stand between the segments). A value found so is
/// then found by value too, wherever else the text repeats it (an MVPD that echoes the `state` in
/// its `error_description` prose). Works on UTF-8 bytes.
///
/// Each span is a range of the *original* bytes holding one secret value, with the value as decoded.
enum SecretSpans {
    /// Parameter names whose values are secrets (compared in lower case).
    static let names: [String] = [
        "code_challenge", "code_verifier", "access_token", "refresh_token", "id_token", "client_secret",
        "assertion", "password", "sessionid", "session", "logout", "token", "state", "code",
    ]

    /// ``names`` as bytes, in the same order (the first that matches wins, as with the strings).
    private static let nameBytes: [[UInt8]] = names.map { Array($0.utf8) }

    /// One secret value found in a text.
    struct Span {
        /// The secret's parameter name, in lower case.
        var name: String
        /// The original bytes holding the value.
        var range: Range<Int>
        /// The value, fully decoded.
        var value: [UInt8]
    }

    /// A byte of a (partly) decoded text and the original bytes it came from.
    private struct Element {
        var byte: UInt8
        var start: Int
        var end: Int
    }

    /// How many rounds of percent-decoding are looked through.
    static let decodingRounds = 16

    /// The secret values in `bytes`, in order, not overlapping (an outer one wins).
    static func find(in bytes: [UInt8]) -> [Span] {
        // Every span is anchored on a delimiter (`=`, `":`, a path's `/`) written raw or percent-encoded:
        // a text without them holds no secret (most status messages and log lines).
        guard bytes.withUnsafeBufferPointer(mayHoldSecrets) else { return [] }
        var found: [(span: Span, round: Int)] = []
        let original = bytes.enumerated().map { Element(byte: $0.element, start: $0.offset, end: $0.offset + 1) }
        // Two readings: as written, and with invisible characters left out (which can join or
        // split an escape: `%\u{2028}3D` is no escape as written, `%3D` without the separator).
        // Until stripping leaves something out, the second reading is the first one again: its
        // texts are scanned only from the round where they differ.
        for stripping in [false, true] {
            var text = original
            var differs = !stripping
            func strip(_ text: [Element]) -> [Element] {
                guard stripping else { return text }
                let stripped = withoutHazards(text)
                if stripped.count != text.count { differs = true }
                return stripped
            }
            text = strip(text)
            for round in 0...decodingRounds {
                if differs { found += scan(text).map { ($0, round) } }
                guard round < decodingRounds, text.contains(where: { $0.byte == UInt8(ascii: "%") }) else { break }
                text = strip(decodeOnce(text))
            }
        }
        // Keep the widest spans, each with its most decoded value; drop any inside one already kept.
        let ordered = found.sorted {
            ($0.span.range.lowerBound, -$0.span.range.count, -$0.round) < ($1.span.range.lowerBound, -$1.span.range.count, -$1.round)
        }.map(\.span)
        var kept: [Span] = []
        for span in ordered {
            if let last = kept.last, last.range.overlaps(span.range) {
                if span.range.upperBound > last.range.upperBound {
                    kept[kept.count - 1].range = last.range.lowerBound..<span.range.upperBound
                }
                continue
            }
            kept.append(span)
        }
        return withEchoes(of: kept, in: bytes)
    }

    /// Whether `bytes` hold what every span needs: `=`, `/`, `%` (a delimiter percent-encoded), or both a
    /// quote and a colon (`"name":`, perhaps with invisible characters between them).
    static func mayHoldSecrets(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        var quote = false
        var colon = false
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "="), UInt8(ascii: "/"), UInt8(ascii: "%"): return true
            case UInt8(ascii: "\""): quote = true
            case UInt8(ascii: ":"): colon = true
            default: continue
            }
            if quote, colon { return true }
        }
        return false
    }

    /// The values shorter than this are not looked for elsewhere in the text (too likely to be a
    /// harmless word of it).
    static let shortestEcho = 8

    /// `spans` and every other place `bytes` repeats one of their values (as it is, or
    /// percent-encoded), in order, not overlapping.
    private static func withEchoes(of spans: [Span], in bytes: [UInt8]) -> [Span] {
        var echoes: [Span] = []
        var looked: Set<[UInt8]> = []
        for span in spans where span.value.count >= shortestEcho && looked.insert(span.value).inserted {
            let text = String(decoding: span.value, as: UTF8.self)
            guard !SecretBook.isPlaceholder(text) else { continue }
            let encoded = Array(PercentEncoding.encode(text).utf8)
            for form in encoded == span.value ? [span.value] : [span.value, encoded] {
                for range in occurrences(of: form, in: bytes)
                where !spans.contains(where: { $0.range.overlaps(range) }) && !echoes.contains(where: { $0.range.overlaps(range) }) {
                    echoes.append(Span(name: span.name, range: range, value: span.value))
                }
            }
        }
        guard !echoes.isEmpty else { return spans }
        return (spans + echoes).sorted { $0.range.lowerBound < $1.range.lowerBound }
    }

    /// Where `needle` occurs in `haystack`, not overlapping.
    private static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> [Range<Int>] {
        guard !needle.isEmpty else { return [] }
        return needle.withUnsafeBufferPointer { needle in
            haystack.withUnsafeBufferPointer { haystack in
                var found: [Range<Int>] = []
                var start = 0
                while let index = ByteSearch.firstOffset(of: needle, in: haystack, from: start) {
                    found.append(index..<(index + needle.count))
                    start = index + needle.count
                }
                return found
            }
        }
    }

    /// The text with control, separator and invisible formatting characters left out, so none can
    /// hide a name from the scan (`st\u{0}ate=`, `co%E2%80%8Bde=`); the original spans stay.
    private static func withoutHazards(_ text: [Element]) -> [Element] {
        // Every hazard starts with a control byte or a byte beyond ASCII.
        guard text.contains(where: { $0.byte < 0x20 || $0.byte >= 0x7F }) else { return text }
        let bytes = text.map(\.byte)[...]
        var out: [Element] = []
        out.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            // A space separates words; it is no hazard here.
            let length = bytes[index] == 0x20 ? 0 : UnicodeHazards.hazardLength(bytes, at: index)
            if length == 0 {
                out.append(text[index])
                index += 1
            } else {
                index += length
            }
        }
        return out
    }

    /// `bytes` with each secret span replaced by what `replacement` makes of it (the rest unchanged).
    static func replacing(in bytes: [UInt8], _ replacement: (Span) -> [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count + 16)
        var position = 0
        for span in find(in: bytes) {
            out += bytes[position..<span.range.lowerBound]
            out += replacement(span)
            position = span.range.upperBound
        }
        out += bytes[position...]
        return out
    }

    /// One round of lenient percent-decoding: valid `%XX` escapes become their byte; the rest stays.
    private static func decodeOnce(_ text: [Element]) -> [Element] {
        var out: [Element] = []
        out.reserveCapacity(text.count)
        var index = 0
        while index < text.count {
            if text[index].byte == UInt8(ascii: "%"), index + 2 < text.count,
                let high = PercentEncoding.hexValue(text[index + 1].byte), let low = PercentEncoding.hexValue(text[index + 2].byte)
            {
                out.append(Element(byte: high << 4 | low, start: text[index].start, end: text[index + 2].end))
                index += 3
            } else {
                out.append(text[index])
                index += 1
            }
        }
        return out
    }

    private static let closing: Set<UInt8> = Set("&#; \t\r\n\"')}],|<>".utf8)

    /// Path prefixes a REST API V2 session code follows, and how many segments come before it.
    static let codePaths: [(prefix: String, skipped: Int)] = [
        ("/authenticate/", 1), ("/profiles/code/", 0), ("/sessions/", 0), ("/activate/", 0),
    ]

    /// Path segments that stand where a code would and are none: `/sessions/sso/…` names a partner,
    /// `/activate/done` is the second screen's last page.
    private static let notCodes: Set<[UInt8]> = [Array("sso".utf8), Array("done".utf8)]

    /// ``codePaths`` as bytes (every prefix starts with `/`).
    private static let codePathBytes: [(prefix: [UInt8], skipped: Int)] = codePaths.map { (Array($0.prefix.utf8), $0.skipped) }

    /// The session codes in REST API V2 paths (`/sessions/sso/…` is a partner, not a code).
    private static func pathSpans(_ text: [Element], _ lower: [UInt8]) -> [Span] {
        var spans: [Span] = []
        guard lower.contains(UInt8(ascii: "/")) else { return spans }
        for (prefix, skipped) in codePathBytes {
            var index = 0
            while index < lower.count {
                guard lower[index] == UInt8(ascii: "/"), matches(prefix, lower, at: index) else {
                    index += 1
                    continue
                }
                var cursor = index + prefix.count
                // Empty segments (`//`) are skipped, as servers that merge slashes skip them.
                func skipSlashes() { while cursor < lower.count, lower[cursor] == UInt8(ascii: "/") { cursor += 1 } }
                skipSlashes()
                for _ in 0..<skipped {
                    while cursor < lower.count, !pathEnd.contains(lower[cursor]) { cursor += 1 }
                    guard cursor < lower.count, lower[cursor] == UInt8(ascii: "/") else { break }
                    skipSlashes()
                }
                let valueStart = cursor
                if let end = placeholderEnd(lower, at: cursor) {
                    cursor = end
                } else {
                    while cursor < lower.count, !pathEnd.contains(lower[cursor]) { cursor += 1 }
                }
                let value = text[valueStart..<cursor].map(\.byte)
                if cursor > valueStart, !notCodes.contains(value) {
                    spans.append(Span(name: "code", range: text[valueStart].start..<text[cursor - 1].end, value: value))
                }
                index = max(cursor, index + 1)
            }
        }
        return spans
    }

    private static let pathEnd: Set<UInt8> = closing.union(Set("/?".utf8))

    /// `name=value`, `name"=value` and `"name":value` (a colon after a bare word is prose: "code: …"),
    /// and codes in V2 paths. The scan is anchored on the delimiters: at each `=` (or `":`) it looks back
    /// for the longest secret name ending there — names are matched anywhere, not only at word starts
    /// (`%code=`, `x_code=`): showing less of a harmless value costs nothing, showing a secret cannot be
    /// taken back. A name inside a value already taken is not looked at.
    private static func scan(_ text: [Element]) -> [Span] {
        let lower = text.map { $0.byte >= 0x41 && $0.byte <= 0x5A ? $0.byte | 0x20 : $0.byte }
        var spans = pathSpans(text, lower)
        var resume = 0
        var delimiter = 0
        while delimiter < lower.count {
            defer { delimiter += 1 }
            let byte = lower[delimiter]
            guard byte == UInt8(ascii: "=") || byte == UInt8(ascii: ":"), delimiter > resume else { continue }
            let quoted = lower[delimiter - 1] == UInt8(ascii: "\"")
            guard quoted || byte == UInt8(ascii: "=") else { continue }
            var nameEnd = quoted ? delimiter - 1 : delimiter
            // An array's brackets (`token[]=`, `code[0]=`) stand between the name and its value.
            if !quoted, lower[nameEnd - 1] == UInt8(ascii: "]"), max(resume, nameEnd - 8) < nameEnd - 1,
                let open = lower[max(resume, nameEnd - 8)..<(nameEnd - 1)].lastIndex(of: UInt8(ascii: "["))
            {
                nameEnd = open
            }
            // The longest name ending here that starts where the scan may look (after any value taken).
            var best: Int?
            for (index, name) in nameBytes.enumerated() where nameEnd - name.count >= resume {
                guard matches(name, lower, at: nameEnd - name.count) else { continue }
                if best.map({ nameBytes[$0].count < name.count }) ?? true { best = index }
            }
            guard let found = best else { continue }
            let start = nameEnd - nameBytes[found].count
            var cursor = delimiter + 1
            while cursor < lower.count, lower[cursor] == UInt8(ascii: " ") || lower[cursor] == UInt8(ascii: "\"") { cursor += 1 }
            let valueStart = cursor
            if let end = placeholderEnd(lower, at: cursor) {
                cursor = end  // a trace placeholder (`<state#1>`) is a value of its own
            } else {
                while cursor < lower.count, !closing.contains(lower[cursor]) { cursor += 1 }
            }
            if cursor > valueStart {
                spans.append(
                    Span(
                        name: names[found], range: text[valueStart].start..<text[cursor - 1].end,
                        value: text[valueStart..<cursor].map(\.byte)))
            }
            resume = max(cursor, start + 1)
            delimiter = resume - 1  // the loop's step moves on to `resume`
        }
        return spans
    }

    /// The end of a trace placeholder (`<kind#n>`) starting at `index`, if one does.
    private static func placeholderEnd(_ lower: [UInt8], at index: Int) -> Int? {
        guard index < lower.count, lower[index] == UInt8(ascii: "<") else { return nil }
        guard let close = lower[index..<min(lower.count, index + 24)].firstIndex(of: UInt8(ascii: ">")) else { return nil }
        return SecretBook.isPlaceholder(String(decoding: lower[index...close], as: UTF8.self)) ? close + 1 : nil
    }

    private static func matches(_ name: [UInt8], _ lower: [UInt8], at index: Int) -> Bool {
        guard index + name.count <= lower.count else { return false }
        for offset in 0..<name.count where lower[index + offset] != name[offset] { return false }
        return true
    }
}
