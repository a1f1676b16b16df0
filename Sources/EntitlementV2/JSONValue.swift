/// A JSON value with one canonical byte form: object keys sorted by their UTF-8 bytes, no
/// insignificant whitespace, numbers as read (times are integer milliseconds), strings escaped
/// minimally (`"`, `\`, control characters). Hand-written so traces need no encoder and so the
/// same record always gives the same bytes.
public enum JSONValue: Sendable, Hashable {
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
    public var canonicalBytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(256)
        write(into: &out)
        return out
    }

    /// The canonical text.
    public var canonicalText: String { String(decoding: canonicalBytes, as: UTF8.self) }

    /// Appends the canonical bytes to `out`.
    public func write(into out: inout [UInt8]) {
        switch self {
        case .null: out += [0x6E, 0x75, 0x6C, 0x6C]
        case .bool(let value): out += value ? Array("true".utf8) : Array("false".utf8)
        case .int(let value): out += Array(String(value).utf8)
        case .number(let value): out += Array(value.literal.utf8)
        case .string(let value): Self.writeString(value, into: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (index, item) in items.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                item.write(into: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let members):
            out.append(UInt8(ascii: "{"))
            let keys = members.keys.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            for (index, key) in keys.enumerated() {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                Self.writeString(key, into: &out)
                out.append(UInt8(ascii: ":"))
                members[key]!.write(into: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hex = Array("0123456789abcdef".utf8)

    private static func writeString(_ value: String, into out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
            case UInt8(ascii: "\\"): out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
            case 0x0A: out += [UInt8(ascii: "\\"), UInt8(ascii: "n")]
            case 0x0D: out += [UInt8(ascii: "\\"), UInt8(ascii: "r")]
            case 0x09: out += [UInt8(ascii: "\\"), UInt8(ascii: "t")]
            case 0..<0x20:
                out += Array("\\u00".utf8)
                out += [hex[Int(byte >> 4)], hex[Int(byte & 15)]]
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }

    // MARK: - Accessors

    /// The member `key` of an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The string, if this is one.
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    /// The integer, if this is one that fits 64 bits.
    public var int: Int64? { if case .int(let value) = self { value } else { nil } }
    /// The number as the nearest `Double`, if this is a number (nil beyond `Double`'s range).
    public var double: Double? {
        switch self {
        case .int(let value): Double(value)
        case .number(let value): value.double
        default: nil
        }
    }
    /// The boolean, if this is one.
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
    /// The elements, if this is an array.
    public var array: [JSONValue]? { if case .array(let items) = self { items } else { nil } }
    /// The members, if this is an object.
    public var object: [String: JSONValue]? { if case .object(let members) = self { members } else { nil } }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral {
    /// A string.
    public init(stringLiteral value: String) { self = .string(value) }
    /// An integer.
    public init(integerLiteral value: Int64) { self = .int(value) }
    /// A boolean.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension JSONValue: ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral {
    /// An object.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { $1 }))
    }

    /// An array.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
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
    public func encode(to encoder: any Encoder) throws {
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
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's text, valid by RFC 8259's grammar.
    public let literal: String

    /// `literal` if it is a JSON number (nothing around it); nil otherwise.
    public init?(_ literal: String) {
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
    public var double: Double? { Double(literal).flatMap { $0.isFinite ? $0 : nil } }

    /// The literal.
    public var description: String { literal }
}
