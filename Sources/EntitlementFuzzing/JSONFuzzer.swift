import EntitlementEngine
import Foundation

/// Fuzzes the JSON reader the engine reads Adobe's answers with, with Foundation's
/// `JSONSerialization` as the oracle. The oracle: it never traps; it accepts a text exactly when
/// Foundation does, but for the refusals it makes on purpose (``deliberateRefusals``); when both
/// accept, they read the same value (numbers compared as Foundation holds them); and the value's
/// canonical text reads back as the same value.
package enum JSONFuzzer {
    /// The `json` target.
    package static let target = FuzzTarget(
        name: "json", summary: "mutated JSON, some bytes not UTF-8: accepted exactly when Foundation accepts, read alike, round-trips",
        input: { String(decoding: bytes(seed: $0), as: UTF8.self) }, run: { check(seed: $0) })

    /// Refusals Foundation does not make, made on purpose: a key given twice (which value counts
    /// differs between readers: an attacker's way to make two of them disagree) and nesting beyond 64.
    /// (Foundation is more lenient than RFC 8259 with a trailing comma and a NUL byte, which the reader
    /// refuses; and
    /// the reader keeps a number beyond `Double`'s range as its text where Foundation refuses it.)
    package static let deliberateRefusals = ["the key '", "nesting deeper than 64"]

    static let corpus: [String] = [
        "{\n\"actionName\": \"authenticate\",\n\"actionType\": \"interactive\",\n\"code\": \"ABC1234\",\n\"expires_in\": 1800\n}",
        "{\n\"decisions\": [\n{\"resource\": \"news\", \"serviceProvider\": \"sp\", \"authorized\": true,\n\"notBefore\": 1700000000000, \"notAfter\": 1700000600000}\n]\n}",
        "{\n\"weight\": 0.5,\n\"scale\": 1e3,\n\"big\": 123456789012345678901234567890,\n\"tiny\": -2.5E-10\n}",
        "[\n\"caf\\u00e9\",\n\"\\ud83d\\ude00\",\n\"tab\\tline\\nquote\\\"\",\n\"\\/\"\n]",
        "{\n\"a\": [1, [2, [3, [4]]]],\n\"b\": {\"c\": {\"d\": null}},\n\"e\": false\n}",
        "[\n-0,\n0.0,\n9223372036854775807,\n-9223372036854775808,\n9223372036854775808\n]",
        "\"just a string\"", "42", "null", "[]", "{}",
    ]

    static func bytes(seed: UInt64) -> [UInt8] {
        var random = FuzzRandom(seed: seed)
        var bytes = Array(TextMutator.mutate(random.pick(corpus), &random).utf8)
        // Now and then a byte no UTF-8 text holds, or a sequence cut short.
        if !bytes.isEmpty, random.chance(1, in: 6) {
            bytes[Int(random.next() % UInt64(bytes.count))] = random.pick([0xFF, 0xC3, 0x80, 0xED, 0xF4])
        }
        return bytes
    }

    static func check(seed: UInt64) -> FuzzFailure? {
        let input = bytes(seed: seed)
        let shown = String(decoding: input, as: UTF8.self)
        let ours = Result { () throws(JSONReader.Failure) -> JSONValue in try JSONReader.read(input) }
        let theirs = try? JSONSerialization.jsonObject(with: Data(input), options: [.fragmentsAllowed])
        switch (ours, theirs) {
        case (.success(let value), let foundation?):
            guard same(value, foundation) else {
                return FuzzFailure(seed: seed, problem: "read as \(value.canonicalText), Foundation read \(foundation)", reproduction: shown)
            }
            guard (try? JSONReader.read(value.canonicalBytes)) == value else {
                return FuzzFailure(seed: seed, problem: "\(value.canonicalText) does not read back as itself", reproduction: shown)
            }
        case (.success(let value), nil):
            // Foundation refuses a number beyond Double's range ("not representable"); the reader keeps its text.
            if holdsNumberBeyondDouble(value) { break }
            return FuzzFailure(seed: seed, problem: "read as \(value.canonicalText), Foundation refuses it", reproduction: shown)
        case (.failure(let failure), let foundation?):
            // Foundation accepts a trailing comma (`[1,]`, `{"a":1,}`), and ends the text at a NUL byte;
            // RFC 8259 allows neither.
            guard deliberateRefusals.contains(where: failure.description.hasPrefix) || hasTrailingComma(input)
                || endsAtNUL(input, as: foundation)
            else {
                return FuzzFailure(seed: seed, problem: "refused (\(failure)), Foundation reads it", reproduction: shown)
            }
        case (.failure, nil):
            break
        }
        return nil
    }

    /// Whether a `,` outside strings is followed (after white space) by `]` or `}`.
    static func hasTrailingComma(_ bytes: [UInt8]) -> Bool {
        var inString = false
        var escaped = false
        for (index, byte) in bytes.enumerated() {
            if inString {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inString = false }
                continue
            }
            if byte == UInt8(ascii: "\"") { inString = true }
            guard byte == UInt8(ascii: ",") else { continue }
            let next = bytes[(index + 1)...].first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }
            if next == UInt8(ascii: "]") || next == UInt8(ascii: "}") { return true }
        }
        return false
    }

    /// Whether the text before the first NUL byte reads as what Foundation read.
    static func endsAtNUL(_ bytes: [UInt8], as foundation: Any) -> Bool {
        guard let nul = bytes.firstIndex(of: 0), let before = try? JSONReader.read(Array(bytes[..<nul])) else { return false }
        return same(before, foundation)
    }

    static func holdsNumberBeyondDouble(_ value: JSONValue) -> Bool {
        switch value {
        case .number(let number): number.double == nil
        case .array(let items): items.contains(where: holdsNumberBeyondDouble)
        case .object(let members): members.values.contains(where: holdsNumberBeyondDouble)
        default: false
        }
    }

    /// Whether `value` is what Foundation read.
    static func same(_ value: JSONValue, _ foundation: Any) -> Bool {
        switch value {
        case .null: return foundation is NSNull
        case .bool(let flag): return (foundation as? NSNumber).map { isBoolean($0) && $0.boolValue == flag } ?? false
        case .int(let integer):
            guard let number = foundation as? NSNumber, !isBoolean(number) else { return false }
            return number.int64Value == integer && number.doubleValue == Double(integer)
        case .number(let number):
            // Foundation holds a long mantissa as a decimal (whose conversion to Double can be an ulp off):
            // compared as decimals then, as doubles otherwise.
            if let decimal = foundation as? NSDecimalNumber { return Decimal(string: number.literal) == decimal.decimalValue }
            guard let theirs = foundation as? NSNumber, !isBoolean(theirs), let double = number.double else { return false }
            return theirs.doubleValue == double
        case .string(let text): return (foundation as? String) == text
        case .array(let items):
            guard let theirs = foundation as? [Any], theirs.count == items.count else { return false }
            return zip(items, theirs).allSatisfy { same($0, $1) }
        case .object(let members):
            guard let theirs = foundation as? [String: Any], theirs.count == members.count else { return false }
            return members.allSatisfy { key, item in theirs[key].map { same(item, $0) } ?? false }
        }
    }

    /// Foundation reads `true` and `false` as NSNumbers of C type `char`; JSON numbers never are.
    private static func isBoolean(_ number: NSNumber) -> Bool { String(cString: number.objCType) == "c" }
}
