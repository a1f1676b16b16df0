/// Reads one JSON text into a ``JSONValue``: a small recursive-descent parser over UTF-8.
/// Refuses floating-point numbers (traces hold integers only), trailing garbage, and depth beyond 64.
public struct JSONReader {
    /// Why a text is not a JSON value this format accepts.
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// The reason, with the byte offset.
        public var description: String
    }

    private let bytes: [UInt8]
    private var index = 0
    private var depth = 0

    /// Parses `text`.
    public static func read(_ text: String) throws(Failure) -> JSONValue {
        var reader = JSONReader(bytes: Array(text.utf8))
        reader.skipSpace()
        let value = try reader.value()
        reader.skipSpace()
        guard reader.index == reader.bytes.count else { throw reader.failure("unexpected text after the value") }
        return value
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func failure(_ message: String) -> Failure { Failure(description: "\(message) at byte \(index)") }

    private mutating func skipSpace() {
        while index < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[index]) { index += 1 }
    }

    private mutating func expect(_ literal: String) throws(Failure) {
        let expected = Array(literal.utf8)
        guard index + expected.count <= bytes.count, Array(bytes[index..<index + expected.count]) == expected else {
            throw failure("expected \(literal)")
        }
        index += expected.count
    }

    private mutating func value() throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end") }
        switch bytes[index] {
        case UInt8(ascii: "n"): try expect("null"); return .null
        case UInt8(ascii: "t"): try expect("true"); return .bool(true)
        case UInt8(ascii: "f"): try expect("false"); return .bool(false)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "["): return try array()
        case UInt8(ascii: "{"): return try object()
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .int(try integer())
        default: throw failure("unexpected character")
        }
    }

    private mutating func integer() throws(Failure) -> Int64 {
        let start = index
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        while index < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[index]) { index += 1 }
        if index < bytes.count, [UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E")].contains(bytes[index]) {
            throw failure("a number that is not an integer")
        }
        guard let value = Int64(String(decoding: bytes[start..<index], as: UTF8.self)) else {
            throw failure("an integer out of range")
        }
        return value
    }

    private mutating func string() throws(Failure) -> String {
        index += 1
        var out: [UInt8] = []
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: out, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard index < bytes.count else { throw failure("unterminated escape") }
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
        guard index + 4 <= bytes.count, let value = UInt32(String(decoding: bytes[index..<index + 4], as: UTF8.self), radix: 16)
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
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipSpace()
            items.append(try value())
            skipSpace()
            guard index < bytes.count else { throw failure("an unterminated array") }
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
        var members: [String: JSONValue] = [:]
        skipSpace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(members)
        }
        while true {
            skipSpace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a key") }
            let key = try string()
            skipSpace()
            try expect(":")
            skipSpace()
            guard members[key] == nil else { throw failure("the key '\(key)' twice") }
            members[key] = try value()
            skipSpace()
            guard index < bytes.count else { throw failure("an unterminated object") }
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: "}") { return .object(members) }
            guard byte == UInt8(ascii: ",") else { throw failure("expected , or }") }
        }
    }
}
