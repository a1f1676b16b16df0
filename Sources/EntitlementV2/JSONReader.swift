import EntitlementSupport

/// Reads one JSON text (RFC 8259) into a `JSONValue`: a small recursive-descent parser over UTF-8.
/// Reads every number (fractions, exponents and integers beyond 64 bits kept exactly, as their text);
/// refuses what RFC 8259 does not allow (leading zeros, lone surrogates, control characters in
/// strings, bytes that are not UTF-8, trailing text), a key given twice, and nesting beyond 64.
package struct JSONReader {
    /// Why a text is not a JSON value this format accepts.
    package struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The reason, with the byte offset.
        package var description: String
    }

    private let bytes: [UInt8]
    /// Where the text starts in ``bytes`` (offsets in failures count from here) and where it ends.
    private let start: Int
    private let end: Int
    private var index: Int
    private var depth = 0

    /// Parses `text`.
    package static func read(_ text: String) throws(Failure) -> JSONValue {
        let bytes = Array(text.utf8)
        return try read(bytes, in: 0..<bytes.count)
    }

    /// Parses the JSON text in `bytes` (a body as it arrived: bytes that are not UTF-8 are refused, not
    /// repaired).
    package static func read(_ bytes: [UInt8]) throws(Failure) -> JSONValue { try read(bytes, in: 0..<bytes.count) }

    /// Parses the JSON text in `bytes[range]` (one line of a trace, read without copying it out).
    package static func read(_ bytes: [UInt8], in range: Range<Int>) throws(Failure) -> JSONValue {
        var reader = JSONReader(bytes: bytes, range: range)
        reader.skipSpace()
        let value = try reader.value()
        reader.skipSpace()
        guard reader.index == reader.end else { throw reader.failure("unexpected text after the value") }
        return value
    }

    /// Reads the JSON object in `bytes` and lends `visit` each member in order: its key's bytes
    /// (unescaped UTF-8, valid for the call only) and its value — no dictionary, no key strings (a
    /// media token's seven claims are matched by their bytes). False if `bytes` is not one JSON object
    /// or `visit` returns false; a key given twice is `visit`'s to refuse.
    package static func visitMembers(_ bytes: [UInt8], _ visit: (UnsafeBufferPointer<UInt8>, JSONValue) -> Bool) -> Bool {
        var reader = JSONReader(bytes: bytes, range: 0..<bytes.count)
        reader.skipSpace()
        guard reader.index < reader.end, bytes[reader.index] == UInt8(ascii: "{") else { return false }
        reader.index += 1
        reader.depth = 1
        do throws(Failure) {
            reader.skipSpace()
            if reader.index < reader.end, bytes[reader.index] == UInt8(ascii: "}") {
                reader.index += 1
            } else {
                while true {
                    reader.skipSpace()
                    guard reader.index < reader.end, bytes[reader.index] == UInt8(ascii: "\"") else { return false }
                    let key = try reader.key()
                    reader.skipSpace()
                    try reader.expect(":")
                    reader.skipSpace()
                    let value = try reader.value()
                    let accepted =
                        switch key {
                        case .inPlace(let range): bytes.withUnsafeBufferPointer { visit(UnsafeBufferPointer(rebasing: $0[range]), value) }
                        case .unescaped(var text): text.withUTF8 { visit($0, value) }
                        }
                    guard accepted else { return false }
                    reader.skipSpace()
                    guard reader.index < reader.end else { return false }
                    let byte = bytes[reader.index]
                    reader.index += 1
                    if byte == UInt8(ascii: "}") { break }
                    guard byte == UInt8(ascii: ",") else { return false }
                }
            }
        } catch {
            return false
        }
        reader.skipSpace()
        return reader.index == reader.end
    }

    /// A key as read: most are bytes of the text as they stand; one with escapes is decoded.
    private enum Key {
        case inPlace(Range<Int>)
        case unescaped(String)
    }

    /// Reads a key (the reader is at its opening quote) without making a string unless it has escapes.
    private mutating func key() throws(Failure) -> Key {
        let run = plainRun(from: index + 1)
        guard run.closed else { return .unescaped(try string()) }
        let range = (index + 1)..<run.end
        if bytes[range].contains(where: { $0 >= 0x80 }) {
            guard bytes.withUnsafeBufferPointer({ UTF8Validation.string(UnsafeBufferPointer(rebasing: $0[range])) }) != nil
            else { throw failure("a string that is not UTF-8") }
        }
        index = run.end + 1
        return .inPlace(range)
    }

    /// From `position` (just past an opening quote): where the string's closing quote stands when
    /// nothing before it needs decoding (`closed`), or else where its first escape or control byte does.
    private func plainRun(from position: Int) -> (end: Int, closed: Bool) {
        var scan = position
        while scan < end {
            let byte = bytes[scan]
            if byte == UInt8(ascii: "\"") { return (scan, true) }
            if byte == UInt8(ascii: "\\") || byte < 0x20 { break }
            scan += 1
        }
        return (scan, false)
    }

    private init(bytes: [UInt8], range: Range<Int>) {
        self.bytes = bytes
        self.start = range.lowerBound
        self.end = range.upperBound
        self.index = range.lowerBound
    }

    private func failure(_ message: String) -> Failure { Failure(description: "\(message) at byte \(index - start)") }

    private mutating func skipSpace() {
        while index < end {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    /// Consumes `literal` (ASCII), or fails naming it.
    private mutating func expect(_ literal: StaticString) throws(Failure) {
        let count = literal.utf8CodeUnitCount
        guard index + count <= end else { throw failure("expected \(literal)") }
        let expected = literal.utf8Start
        for offset in 0..<count where bytes[index + offset] != expected[offset] { throw failure("expected \(literal)") }
        index += count
    }

    private mutating func value() throws(Failure) -> JSONValue {
        guard index < end else { throw failure("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try number()
        default: throw failure("unexpected character")
        }
    }

    /// A number, by RFC 8259's grammar (`-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`): an
    /// integer that fits 64 bits is `JSONValue/int(_:)`; a fraction, an exponent or a larger integer is
    /// `JSONValue/number(_:)`, kept as its exact text.
    private mutating func number() throws(Failure) -> JSONValue {
        let first = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < end, isDigit(bytes[index]) else { throw failure("a number without digits") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
            if index < end, isDigit(bytes[index]) { throw failure("a number with a leading zero") }
        } else {
            while index < end, isDigit(bytes[index]) { index += 1 }
        }
        var integral = true
        if index < end, bytes[index] == UInt8(ascii: ".") {
            integral = false
            index += 1
            guard index < end, isDigit(bytes[index]) else { throw failure("a fraction without digits") }
            while index < end, isDigit(bytes[index]) { index += 1 }
        }
        if index < end, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            integral = false
            index += 1
            if index < end, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard index < end, isDigit(bytes[index]) else { throw failure("an exponent without digits") }
            while index < end, isDigit(bytes[index]) { index += 1 }
        }
        if integral, let value = Self.int64(bytes[first..<index]) { return .int(value) }
        return .number(JSONNumber(validated: String(decoding: bytes[first..<index], as: UTF8.self)))
    }

    /// The integer `digits` (an optional `-`, then digits, already checked) if it fits 64 bits: read
    /// straight from the bytes, as most numbers in traces and answers are — no string is made for them.
    private static func int64(_ digits: ArraySlice<UInt8>) -> Int64? {
        let negative = digits.first == UInt8(ascii: "-")
        // Accumulated as a negative number, so Int64.min is representable.
        var value: Int64 = 0
        for byte in digits.dropFirst(negative ? 1 : 0) {
            let (times10, o1) = value.multipliedReportingOverflow(by: 10)
            let (next, o2) = times10.subtractingReportingOverflow(Int64(byte - UInt8(ascii: "0")))
            guard !o1, !o2 else { return nil }
            value = next
        }
        if negative { return value }
        return value == .min ? nil : -value
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func string() throws(Failure) -> String {
        index += 1
        // Most strings have no escape: one scan to the closing quote, decoded straight from the bytes.
        let run = plainRun(from: index)
        if run.closed {
            guard let text = UTF8Validation.string(bytes[index..<run.end]) else { throw failure("a string that is not UTF-8") }
            index = run.end + 1
            return text
        }
        var out: [UInt8] = Array(bytes[index..<run.end])
        index = run.end
        while index < end {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""):
                guard let text = UTF8Validation.string(out) else { throw failure("a string that is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                guard index < end else { throw failure("unterminated escape") }
                let escaped = bytes[index]
                index += 1
                switch escaped {
                case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escaped)
                case UInt8(ascii: "b"): out.append(0x08)
                case UInt8(ascii: "f"): out.append(0x0C)
                case UInt8(ascii: "n"): out.append(0x0A)
                case UInt8(ascii: "r"): out.append(0x0D)
                case UInt8(ascii: "t"): out.append(0x09)
                case UInt8(ascii: "u"):
                    var scalar = try hex4()
                    if (0xD800..<0xDC00).contains(scalar) {
                        try expect("\\u")
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw failure("a lone surrogate") }
                        scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let unicode = Unicode.Scalar(scalar) else { throw failure("an invalid \\u escape") }
                    out += Array(String(Character(unicode)).utf8)
                default: throw failure("an unknown escape")
                }
            case 0..<0x20: throw failure("a control character in a string")
            default: out.append(byte)
            }
        }
        throw failure("an unterminated string")
    }

    private mutating func hex4() throws(Failure) -> UInt32 {
        guard index + 4 <= end, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
        else { throw failure("a bad \\u escape") }
        index += 4
        return value
    }

    private mutating func array() throws(Failure) -> JSONValue {
        index += 1
        depth += 1
        defer { depth -= 1 }
        guard depth <= 64 else { throw failure("nesting deeper than 64") }
        var items: [JSONValue] = []
        skipSpace()
        if index < end, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value())
            skipSpace()
            guard index < end else { throw failure("an unterminated array") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "]") { return .array(items) }
            guard byte == UInt8(ascii: ",") else { throw failure("expected , or ]") }
        }
    }

    private mutating func object() throws(Failure) -> JSONValue {
        index += 1
        depth += 1
        defer { depth -= 1 }
        guard depth <= 64 else { throw failure("nesting deeper than 64") }
        skipSpace()
        if index < end, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object([:])
        }
        // The members are read first and the dictionary made once, at its size: grown member by member
        // it would be rebuilt (every key hashed again) at each doubling.
        var read: [(key: String, value: JSONValue, valueStart: Int)] = []
        while true {
            skipSpace()
            guard index < end, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try string()
            skipSpace()
            try expect(":")
            skipSpace()
            let valueStart = index
            read.append((key, try value(), valueStart))
            skipSpace()
            guard index < end else { throw failure("an unterminated object") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "}") {
                var members = [String: JSONValue](minimumCapacity: read.count)
                for member in read {
                    // A key already there is the refusal, reported where its second value starts.
                    guard members.updateValue(member.value, forKey: member.key) == nil else {
                        index = member.valueStart
                        throw failure("the key '\(member.key)' twice")
                    }
                }
                return .object(members)
            }
            guard byte == UInt8(ascii: ",") else { throw failure("expected , or }") }
        }
    }
}
