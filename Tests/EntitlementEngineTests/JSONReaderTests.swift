@testable import EntitlementEngine
import Testing

/// The trace JSON reader's edges: integers to the limits of Int64 and no further, strings with and
/// without escapes, and the refusals with their byte offsets.
@Suite("JSON reader")
struct JSONReaderTests {
    @Test(arguments: [
        ("0", Int64(0)), ("-0", 0), ("42", 42), ("-42", -42),
        ("9223372036854775807", Int64.max), ("-9223372036854775808", Int64.min),
    ])
    func integersToTheLimits(text: String, value: Int64) throws {
        #expect(try JSONReader.read(text) == .int(value))
    }

    @Test(arguments: ["9223372036854775808", "-9223372036854775809", "99999999999999999999", "-", "1.5", "1e3", "01x"])
    func integersBeyondTheLimitsOrNotIntegersAreRefused(text: String) {
        #expect(throws: JSONReader.Failure.self) { try JSONReader.read(text) }
    }

    @Test func stringsWithAndWithoutEscapes() throws {
        #expect(try JSONReader.read(#""plain""#) == .string("plain"))
        #expect(try JSONReader.read(#""""#) == .string(""))
        #expect(try JSONReader.read(#""a\"b\\c\/d\n""#) == .string("a\"b\\c/d\n"))
        #expect(try JSONReader.read(#""caf\u00e9 \ud83d\ude00""#) == .string("café 😀"))
        #expect(try JSONReader.read(#"{"k":["x",1,true,false,null]}"#) == .object(["k": .array([.string("x"), .int(1), .bool(true), .bool(false), .null])]))
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
            #expect(error.line == 2)
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
