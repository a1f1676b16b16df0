/// Header fields in the order they arrived, looked up without regard to case (RFC 9110 §5.1).
package struct HTTPHeaders: Sendable, Hashable, Sequence {
    /// The fields, in order; names as sent.
    package private(set) var fields: [(name: String, value: String)]

    /// Headers made of `fields`.
    package init(_ fields: [(name: String, value: String)] = []) { self.fields = fields }

    /// The first value of `name`, if any.
    package subscript(_ name: String) -> String? {
        fields.first { $0.name.lowercased() == name.lowercased() }?.value
    }

    /// Every value of `name`, in order.
    package func values(_ name: String) -> [String] {
        let lowered = name.lowercased()
        return fields.filter { $0.name.lowercased() == lowered }.map(\.value)
    }

    /// Adds a field (a repeated name keeps both).
    package mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }

    /// Replaces every field named `name` with one holding `value`.
    package mutating func set(_ name: String, _ value: String) {
        remove(name)
        add(name, value)
    }

    /// Removes every field named `name`.
    package mutating func remove(_ name: String) {
        let lowered = name.lowercased()
        fields.removeAll { $0.name.lowercased() == lowered }
    }

    /// Whether `name` is a field name (RFC 9110 §5.1: a token — letters, digits, the backtick and
    /// `!#$%&'*+-.^_|~`).
    package static func isToken(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
            default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
            }
        }
    }

    /// Whether `value` may be written as a field value (RFC 9110 §5.5): tabs, spaces, visible characters
    /// and bytes above 0x7F — never CR, LF, NUL or another control character.
    package static func isSafeValue(_ value: String) -> Bool {
        value.utf8.allSatisfy { $0 == 0x09 || ($0 >= 0x20 && $0 != 0x7F) }
    }

    /// Iterates the fields in order.
    package func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Equal when the same fields arrived in the same order.
    package static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.count == rhs.fields.count && zip(lhs.fields, rhs.fields).allSatisfy { $0.name == $1.name && $0.value == $1.value }
    }

    /// Hashes the fields in order.
    package func hash(into hasher: inout Hasher) {
        for field in fields {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }
}
