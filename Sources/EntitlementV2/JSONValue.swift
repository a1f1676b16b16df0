/// A JSON value with one canonical byte form: object keys sorted by their UTF-8 bytes, no
/// insignificant whitespace, numbers as read (times are integer milliseconds), strings escaped
/// minimally (`"`, `\`, control characters). Hand-written so traces need no encoder and so the
/// same record always gives the same bytes.
package enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// An integer that fits 64 bits.
    case int(Int64)
    /// Any other number — a fraction, an exponent, a larger integer — as its exact text.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    // MARK: - Canonical writer

    /// The canonical UTF-8 bytes.
    package var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    /// The canonical text.
    package var canonicalText: String { String(decoding: canonicalBytes, as: UTF8.self) }

    /// Appends the canonical bytes to `out`.
    package func write(into out: inout [UInt8]) {
        switch self {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let value): out.append(contentsOf: value ? "true".utf8 : "false".utf8)
        case .int(let value): Self.writeInteger(value, into: &out)
        case .number(let value): out.append(contentsOf: value.literal.utf8)
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for index in items.indices {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                items[index].write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            // Sorted as members, not as keys looked up again: no key is hashed twice.
            let sorted = members.sorted { Self.precedes($0.key, $1.key) }
            for index in sorted.indices {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(sorted[index].key, into: &out)
                out.append(UInt8(ascii: ":"))
                sorted[index].value.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Whether `first` sorts before `second` by their UTF-8 bytes.
    private static func precedes(_ first: String, _ second: String) -> Bool {
        var first = first
        var second = second
        return first.withUTF8 { a in
            second.withUTF8 { b in
                let common = min(a.count, b.count)
                for index in 0..<common where a[index] != b[index] { return a[index] < b[index] }
                return a.count < b.count
            }
        }
    }

    /// Appends `value`'s decimal digits (with a leading `-` when negative).
    private static func writeInteger(_ value: Int64, into out: inout [UInt8]) {
        if value < 0 { out.append(UInt8(ascii: "-")) }
        var magnitude = value.magnitude
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // room for the 20 digits of the largest magnitude
        withUnsafeMutableBytes(of: &digits) { buffer in
            var position = buffer.count
            repeat {
                position -= 1
                buffer[position] = UInt8(ascii: "0") + UInt8(magnitude % 10)
                magnitude /= 10
            } while magnitude > 0
            out.append(contentsOf: buffer[position...])
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    /// Appends `value` quoted, escaping `"`, `\` and control characters; runs that need no escape
    /// are copied whole.
    private static func writeString(_ value: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        var value = value
        value.withUTF8 { bytes in
            var run = 0
            for index in 0..<bytes.count {
                let byte = bytes[index]
                guard byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") else { continue }
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run..<index]))
                run = index + 1
                out.append(UInt8(ascii: "\\"))
                switch byte {
                case UInt8(ascii: "\""): out.append(UInt8(ascii: "\""))
                case UInt8(ascii: "\\"): out.append(UInt8(ascii: "\\"))
                case 0x0A: out.append(UInt8(ascii: "n"))
                case 0x0D: out.append(UInt8(ascii: "r"))
                case 0x09: out.append(UInt8(ascii: "t"))
                default:
                    out.append(contentsOf: "u00".utf8)
                    out.append(hex[Int(byte >> 4)])
                    out.append(hex[Int(byte & 15)])
                }
            }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[run...]))
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: - Accessors

    /// The member `key` of an object.
    package subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, if this is one.
    package var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, if this is one that fits 64 bits.
    package var int: Int64? { if case .int(let value) = self { value } else { nil } }
    /// The number as the nearest `Double`, if this is a number (nil beyond `Double`'s range).
    package var double: Double? {
        switch self {
        case .int(let value): Double(value)
        case .number(let value): value.double
        default: nil
        }
    }
    /// The boolean, if this is one.
    package var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements, if this is an array.
    package var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    /// The members, if this is an object.
    package var object: [String: JSONValue]? { if case .object(let members) = self { members } else { nil } }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    /// A string.
    package init(stringLiteral value: String) { self = .string(value) }
    /// An integer.
    package init(integerLiteral value: Int64) { self = .int(value) }
    /// A boolean.
    package init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    /// An object.
    package init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// An array.
    package init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
}

extension JSONValue: Encodable {
    private struct MemberKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    /// Encodes the same tree through any `Encoder` (the benchmark compares the canonical writer
    /// with `JSONEncoder` on identical records this way).
    package func encode(to encoder: any Encoder) throws {
        switch self {
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .bool(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .int(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .number(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value.double ?? .nan)
        case .string(let value):
            var container = encoder.singleValueContainer()
            try container.encode(value)
        case .array(let items):
            var container = encoder.unkeyedContainer()
            for item in items { try container.encode(item) }
        case .object(let members):
            var container = encoder.container(keyedBy: MemberKey.self)
            for (key, value) in members { try container.encode(value, forKey: MemberKey(stringValue: key)) }
        }
    }
}

/// A JSON number that is not a 64-bit integer, kept exactly as written: nothing is rounded until a
/// reader asks for a `Double`.
package struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text, valid by RFC 8259's grammar.
    package let literal: String

    /// `literal` if it is a JSON number (nothing around it); nil otherwise.
    package init?(_ literal: String) {
        guard literal.utf8.allSatisfy({ $0 > 0x20 }) else { return nil }
        switch try? JSONReader.read(literal) {
        case .number(let number)?: self = number
        case .int?: self.literal = literal
        default: return nil
        }
    }

    /// A literal the reader has checked.
    init(validated literal: String) { self.literal = literal }

    /// The nearest `Double`; nil beyond its range (`1e400`).
    package var double: Double? { Double(literal).flatMap { $0.isFinite ? $0 : nil } }

    /// The literal.
    package var description: String { literal }
}
