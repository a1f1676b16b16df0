/// Reads RESP2 values from a byte stream that arrives in pieces: ``append(_:)`` what was read,
/// then take whole values with ``next()``. Strict and bounded: a type byte it does not know, a
/// length that is not a decimal number, a missing CRLF, a bulk string longer than
/// ``Limits/bulkLength``, an array with more than ``Limits/arrayCount`` elements or nested deeper than
/// ``Limits/depth`` is a ``RESPParseError`` — never a trap, never an unbounded allocation.
package struct RESPParser: Sendable {
    /// The bounds of what one value may be.
    package struct Limits: Sendable, Hashable {
        /// The longest bulk string, in bytes (Redis's own default `proto-max-bulk-len` is 512 MB).
        package var bulkLength: Int
        /// The most elements in one array.
        package var arrayCount: Int
        /// How deeply arrays may nest.
        package var depth: Int
        /// The longest simple string, error or number line, in bytes.
        package var lineLength: Int

        /// Creates limits.
        package init(bulkLength: Int = 16 << 20, arrayCount: Int = 1 << 20, depth: Int = 32, lineLength: Int = 64 << 10) {
            self.bulkLength = bulkLength
            self.arrayCount = arrayCount
            self.depth = depth
            self.lineLength = lineLength
        }
    }

    /// The bounds in force.
    package let limits: Limits
    private var buffer: [UInt8] = []
    private var start = 0
    /// Bytes consumed before `buffer[0]`, for error offsets.
    private var consumed = 0

    /// A parser with `limits`.
    package init(limits: Limits = Limits()) { self.limits = limits }

    /// Bytes read but not yet part of a whole value.
    package var buffered: Int { buffer.count - start }

    /// Adds bytes read from the connection.
    package mutating func append(_ bytes: some Collection<UInt8>) {
        if start > 4096, start > buffer.count / 2 {
            buffer.removeFirst(start)
            consumed += start
            start = 0
        }
        buffer += bytes
    }

    /// The next whole value, or nil when more bytes are needed.
    package mutating func next() throws(RESPParseError) -> RESPValue? {
        var index = start
        guard let value = try parse(at: &index, depth: 0) else { return nil }
        start = index
        return value
    }

    private func fail(_ index: Int, _ reason: String) -> RESPParseError {
        RESPParseError(offset: consumed + index, reason: reason)
    }

    /// The line at `index` up to CRLF (without it), moving `index` past it; nil when incomplete.
    private func line(at index: inout Int) throws(RESPParseError) -> ArraySlice<UInt8>? {
        var cursor = index
        while cursor < buffer.count {
            if buffer[cursor] == 13 {
                guard cursor + 1 < buffer.count else { return nil }
                guard buffer[cursor + 1] == 10 else { throw fail(cursor + 1, "a carriage return not followed by a line feed") }
                let line = buffer[index..<cursor]
                index = cursor + 2
                return line
            }
            if buffer[cursor] == 10 { throw fail(cursor, "a line feed without a carriage return") }
            guard cursor - index < limits.lineLength else { throw fail(cursor, "a line longer than \(limits.lineLength) bytes") }
            cursor += 1
        }
        guard cursor - index <= limits.lineLength else { throw fail(cursor, "a line longer than \(limits.lineLength) bytes") }
        return nil
    }

    /// A signed decimal number in RESP's form: an optional `-`, then 1 to 19 digits.
    private func number(_ text: ArraySlice<UInt8>, at index: Int) throws(RESPParseError) -> Int64 {
        var digits = text
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.count <= 19, digits.allSatisfy({ (48...57).contains($0) }) else {
            throw fail(index, "'\(String(decoding: text.prefix(24), as: UTF8.self))' is not a decimal number")
        }
        var value: Int64 = 0
        for digit in digits {
            let (times, overflow) = value.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times.addingReportingOverflow(Int64(digit - 48))
            guard !overflow, !overflow2 else { throw fail(index, "a number out of range") }
            value = sum
        }
        return negative ? -value : value
    }

    private func parse(at index: inout Int, depth: Int) throws(RESPParseError) -> RESPValue? {
        guard index < buffer.count else { return nil }
        let typeIndex = index
        let type = buffer[index]
        var cursor = index + 1
        guard let header = try line(at: &cursor) else { return nil }
        let text = { String(decoding: header, as: UTF8.self) }
        switch type {
        case UInt8(ascii: "+"):
            index = cursor
            return .simpleString(text())
        case UInt8(ascii: "-"):
            index = cursor
            return .error(text())
        case UInt8(ascii: ":"):
            let value = try number(header, at: typeIndex + 1)
            index = cursor
            return .integer(value)
        case UInt8(ascii: "$"):
            let length = try number(header, at: typeIndex + 1)
            if length == -1 {
                index = cursor
                return .bulkString(nil)
            }
            guard length >= 0 else { throw fail(typeIndex + 1, "a negative bulk length other than -1") }
            guard length <= limits.bulkLength else { throw fail(typeIndex + 1, "a bulk string of \(length) bytes (the limit is \(limits.bulkLength))") }
            let count = Int(length)
            guard buffer.count - cursor >= count + 2 else { return nil }
            guard buffer[cursor + count] == 13, buffer[cursor + count + 1] == 10 else {
                throw fail(cursor + count, "a bulk string not followed by CRLF")
            }
            let bytes = Array(buffer[cursor..<(cursor + count)])
            index = cursor + count + 2
            return .bulkString(bytes)
        case UInt8(ascii: "*"):
            let count = try number(header, at: typeIndex + 1)
            if count == -1 {
                index = cursor
                return .array(nil)
            }
            guard count >= 0 else { throw fail(typeIndex + 1, "a negative array length other than -1") }
            guard count <= limits.arrayCount else { throw fail(typeIndex + 1, "an array of \(count) elements (the limit is \(limits.arrayCount))") }
            guard depth < limits.depth else { throw fail(typeIndex, "arrays nested deeper than \(limits.depth)") }
            var items: [RESPValue] = []
            // Each element is at least 3 bytes: never reserve more than the buffer can hold.
            items.reserveCapacity(min(Int(count), (buffer.count - cursor) / 3 + 1))
            for _ in 0..<count {
                guard let item = try parse(at: &cursor, depth: depth + 1) else { return nil }
                items.append(item)
            }
            index = cursor
            return .array(items)
        default:
            throw fail(typeIndex, "unknown type byte 0x\(String(type, radix: 16))")
        }
    }
}
