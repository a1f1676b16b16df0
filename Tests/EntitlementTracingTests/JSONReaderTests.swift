@testable import EntitlementCore
@testable import EntitlementEngine
@testable import EntitlementV2
import EntitlementTracing
import EntitlementTestSupport
import Testing

/// The JSON reader's edges: integers to the limits of Int64, every other number kept exactly, strings
/// with and without escapes, and the refusals (RFC 8259's) with their byte offsets.
@Suite("JSON reader")
struct JSONReaderTests {
    @Test(arguments: [
        ("0", Int64(0)), ("-0", 0), ("42", 42), ("-42", -42),
        ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
    ])
    func integersToTheLimits(text: String, value: Int64) throws {
        try expectEqual(JSONReader.read(text), .int(value))
    }

    /// Every other number RFC 8259 allows is read exactly, as its text: fractions, exponents, and
    /// integers beyond 64 bits (never rounded to the nearest Int64 or Double on the way in).
    @Test(arguments: [
        ("9223372036854775808", 9.223372036854775808e18), ("-9223372036854775809", -9.223372036854775809e18),
        ("99999999999999999999", 1e20), ("0.5", 0.5), ("-0.0", -0.0), ("1e3", 1000), ("1E+3", 1000), ("2.5e-3", 0.0025),
        ("123456789012345678901234567890.5", 1.2345678901234568e29),
    ])
    func everyOtherNumberIsKeptAsItsText(text: String, nearest: Double) throws {
        let value = try JSONReader.read(text)
        expectEqual(value, .number(JSONNumber(validated: text)))
        #expect(value.double == nearest && value.int == nil)
        expectEqual(value.canonicalText, text)
        try expectEqual(JSONReader.read(#"{"weight":\#(text)}"#)["weight"], value)
    }

    @Test func aNumberBeyondDoublesRangeIsReadButHasNoDouble() throws {
        #expect(try JSONReader.read("1e400").double == nil)
        #expect(JSONNumber("1e400")?.literal == "1e400" && JSONNumber(" 1") == nil && JSONNumber("1.") == nil)
    }

    @Test(arguments: [
        ("-", "a number without digits"), ("01", "a number with a leading zero"), ("-01", "a number with a leading zero"),
        ("1.", "a fraction without digits"), (".5", "unexpected character"), ("1e", "an exponent without digits"),
        ("1e+", "an exponent without digits"), ("+1", "unexpected character"), ("0x10", "unexpected text after the value"),
        ("NaN", "unexpected character"), ("Infinity", "unexpected character"), ("01x", "a number with a leading zero"),
    ])
    func whatRFC8259DoesNotAllowIsRefused(text: String, reason: String) {
        do {
            _ = try JSONReader.read(text)
            Issue.record("\(text) was read")
        } catch {
            #expect(error.description.hasPrefix(reason), "\(text): \(error)")
        }
    }

    @Test func bytesThatAreNotUTF8AreRefused() {
        for bytes: [UInt8] in [[0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0x5C, 0x6E, 0xED, 0xA0, 0x80, 0x22]] {
            #expect(throws: JSONReader.Failure.self) { try JSONReader.read(bytes, in: 0..<bytes.count) }
        }
    }

    @Test func stringsWithAndWithoutEscapes() throws {
        try expectEqual(JSONReader.read(#""plain""#), .string("plain"))
        #expect(try JSONReader.read(#""""#) == .string(""))
        try expectEqual(JSONReader.read(#""a\"b\\c\/d\n""#), .string("a\"b\\c/d\n"))
        try expectEqual(JSONReader.read(#""caf\u00e9 \ud83d\ude00""#), .string("café 😀"))
        try expectEqual(JSONReader.read(#"{"k":["x",1,true,false,null]}"#), .object(["k": .array([.string("x"), .int(1), .bool(true), .bool(false), .null])]))
    }

    @Test func refusalsSayWhereInTheText() {
        #expect(throws: JSONReader.Failure(description: "a control character in a string at byte 4")) {
            try JSONReader.read("\"ab\u{01}\"")
        }
        #expect(throws: JSONReader.Failure(description: "unexpected text after the value at byte 2")) { try JSONReader.read("1 2") }
        #expect(throws: JSONReader.Failure(description: "expected true at byte 0")) { try JSONReader.read("trux") }
        #expect(throws: JSONReader.Failure(description: "an unterminated string at byte 4")) { try JSONReader.read("\"abc") }
        #expect(throws: JSONReader.Failure(description: "a lone surrogate at byte 13")) { try JSONReader.read(#""\ud83d\u0041""#) }
    }

    @Test func aTraceWithABadLineNamesTheLine() throws {
        let good = try Trace.parse(Self.minimalTrace)
        #expect(good.records.isEmpty)
        #expect(throws: TraceError.self) { try Trace.parse(Self.minimalTrace + "{\"seq\":1,\n") }
        do {
            _ = try Trace.parse(Self.minimalTrace + "not json\n")
            Issue.record("a bad line was read")
        } catch {
            expectEqual(error.line, 2)
        }
        do {
            _ = try Trace.parse(Self.minimalTrace + "x")
            Issue.record("a truncated trace was read")
        } catch {
            #expect(error.line == 2 && error.reason == .truncated)
        }
    }

    static let minimalTrace = """
        {"device":"d","engine":"e","format":"2.0","machine":"m","recorded_with":"r","settings":{},"start":0,"trace":"header"}

        """
}
