import EntitlementTestSupport
import Testing

@testable import EntitlementRedis

/// RESP2 as the protocol specification writes it: its examples parse, whole or a byte at a time,
/// and write back the same bytes; anything else is a typed error at its byte.
@Suite("RESP parser and encoder")
struct RESPParserTests {
    static let examples: [(String, RESPValue)] = [
        ("+OK\r\n", .simpleString("OK")),
        ("-Error message\r\n", .error("Error message")),
        ("-WRONGTYPE Operation against a key holding the wrong kind of value\r\n",
         .error("WRONGTYPE Operation against a key holding the wrong kind of value")),
        (":0\r\n", .integer(0)), (":1000\r\n", .integer(1000)), (":-12\r\n", .integer(-12)),
        ("$5\r\nhello\r\n", .bulk("hello")), ("$0\r\n\r\n", .bulkString([])), ("$-1\r\n", .bulkString(nil)),
        ("*0\r\n", .array([])), ("*-1\r\n", .array(nil)),
        ("*2\r\n$5\r\nhello\r\n$5\r\nworld\r\n", .array([.bulk("hello"), .bulk("world")])),
        ("*3\r\n:1\r\n:2\r\n:3\r\n", .array([.integer(1), .integer(2), .integer(3)])),
        ("*5\r\n:1\r\n:2\r\n:3\r\n:4\r\n$5\r\nhello\r\n", .array([.integer(1), .integer(2), .integer(3), .integer(4), .bulk("hello")])),
        ("*2\r\n*3\r\n:1\r\n:2\r\n:3\r\n*2\r\n+Hello\r\n-World\r\n",
         .array([.array([.integer(1), .integer(2), .integer(3)]), .array([.simpleString("Hello"), .error("World")])])),
        ("*3\r\n$5\r\nhello\r\n$-1\r\n$5\r\nworld\r\n", .array([.bulk("hello"), .bulkString(nil), .bulk("world")])),
        ("$4\r\n\r\n\r\n\r\n", .bulkString([13, 10, 13, 10])),
    ]

    @Test(arguments: 0..<examples.count)
    func theSpecificationsExamplesParseWholeOrByteByByteAndWriteBack(index: Int) throws {
        let (wire, value) = Self.examples[index]
        var whole = RESPParser()
        whole.append(Array(wire.utf8))
        try expectEqual(whole.next(), value)
        #expect(try whole.next() == nil && whole.buffered == 0)
        var pieces = RESPParser()
        var got: [RESPValue] = []
        for byte in wire.utf8 {
            pieces.append([byte])
            if let value = try pieces.next() { got.append(value) }
        }
        expectEqual(got, [value])
        expectEqual(value.encoded, Array(wire.utf8))
    }

    @Test func valuesFollowEachOtherAndPipelinedRepliesComeInOrder() throws {
        var parser = RESPParser()
        parser.append(Array("+OK\r\n:7\r\n$-1\r\n*1\r\n$1\r\n".utf8))
        try expectEqual(parser.next(), .simpleString("OK"))
        try expectEqual(parser.next(), .integer(7))
        try expectEqual(parser.next(), .bulkString(nil))
        #expect(try parser.next() == nil, "an array whose element is incomplete waits")
        parser.append(Array("x\r\n".utf8))
        try expectEqual(parser.next(), .array([.bulk("x")]))
    }

    @Test func commandsAreArraysOfBulkStrings() {
        expectEqual(RESPValue.command(["SET", "k", "a b"]), Array("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$3\r\na b\r\n".utf8))
        expectEqual(RESPValue.command(["GET", "ключ"]), Array("*2\r\n$3\r\nGET\r\n$8\r\nключ\r\n".utf8), "lengths are in bytes")
    }

    @Test(arguments: [
        ("?what\r\n", 0, "unknown type byte 0x3f"),
        ("+OK\n", 3, "a line feed without a carriage return"),
        ("+OK\rX", 4, "a carriage return not followed by a line feed"),
        (":12a\r\n", 1, "'12a' is not a decimal number"),
        (":\r\n", 1, "'' is not a decimal number"),
        (":99999999999999999999\r\n", 1, "'99999999999999999999' is not a decimal number"),
        ("$-2\r\n", 1, "a negative bulk length other than -1"),
        ("$3\r\nabcd\r\n", 7, "a bulk string not followed by CRLF"),
        ("$99999999\r\n", 1, "a bulk string of 99999999 bytes (the limit is 16777216)"),
        ("*-5\r\n", 1, "a negative array length other than -1"),
        ("*9999999\r\n", 1, "an array of 9999999 elements (the limit is 1048576)"),
        ("*1\r\n?\r\n", 4, "unknown type byte 0x3f"),
    ])
    func malformedInputIsATypedErrorAtItsByte(wire: String, offset: Int, reason: String) {
        var parser = RESPParser()
        parser.append(Array(wire.utf8))
        do {
            let value = try parser.next()
            Issue.record("accepted \(String(describing: value))")
        } catch {
            #expect(error.offset == offset && error.reason.hasPrefix(reason), "\(error)")
        }
    }

    @Test func nestingAndLinesAreBounded() {
        var deep = RESPParser(limits: .init(depth: 3))
        deep.append(Array(String(repeating: "*1\r\n", count: 4).utf8) + Array(":1\r\n".utf8))
        #expect(throws: RESPParseError.self) { try deep.next() }
        var long = RESPParser(limits: .init(lineLength: 8))
        long.append(Array(("+" + String(repeating: "a", count: 20)).utf8))
        #expect(throws: RESPParseError.self) { try long.next() }
        var unterminated = RESPParser(limits: .init(lineLength: 8))
        unterminated.append(Array("+abc".utf8))
        #expect(throws: Never.self) { try unterminated.next() }
    }

    @Test func aHugeArrayHeaderReservesNothingItCannotHold() throws {
        var parser = RESPParser()
        parser.append(Array("*1000000\r\n:1\r\n".utf8))
        #expect(try parser.next() == nil, "waits for the rest, without reserving a million elements")
    }

    @Test func lineBreaksCannotBeSmuggledIntoSimpleStrings() {
        expectEqual(RESPValue.simpleString("a\r\nb").encoded, Array("+a  b\r\n".utf8))
    }
}
