/// A value of the Redis serialization protocol (RESP2), as a server sends it and a client writes
/// commands with it.
public indirect enum RESPValue: Sendable, Hashable {
    /// `+OK\r\n`: a short status line.
    case simpleString(String)
    /// `-ERR message\r\n`: the server refused the command.
    case error(String)
    /// `:42\r\n`.
    case integer(Int64)
    /// `$3\r\nfoo\r\n`: binary-safe bytes; nil is the null bulk string `$-1\r\n`.
    case bulkString([UInt8]?)
    /// `*2\r\n…`: nil is the null array `*-1\r\n` (an aborted `EXEC`, a timed-out blocking pop).
    case array([RESPValue]?)

    /// A bulk string of `text`'s UTF-8 bytes.
    package static func bulk(_ text: String) -> RESPValue { .bulkString(Array(text.utf8)) }

    /// The value's text, for simple and bulk strings that are UTF-8.
    public var text: String? {
        switch self {
        case .simpleString(let text): text
        case .bulkString(let bytes?): String(validating: bytes, as: UTF8.self)
        default: nil
        }
    }

    /// The wire form of this value.
    package var encoded: [UInt8] {
        var out: [UInt8] = []
        encode(into: &out)
        return out
    }

    /// Appends the wire form of this value to `out`.
    package func encode(into out: inout [UInt8]) {
        func line(_ prefix: UInt8, _ text: String) {
            out.append(prefix)
            out += Array(text.utf8)
            out += [13, 10]
        }
        switch self {
        case .simpleString(let text): line(UInt8(ascii: "+"), Self.oneLine(text))
        case .error(let text): line(UInt8(ascii: "-"), Self.oneLine(text))
        case .integer(let number): line(UInt8(ascii: ":"), String(number))
        case .bulkString(nil): line(UInt8(ascii: "$"), "-1")
        case .bulkString(let bytes?):
            line(UInt8(ascii: "$"), String(bytes.count))
            out += bytes
            out += [13, 10]
        case .array(nil): line(UInt8(ascii: "*"), "-1")
        case .array(let items?):
            line(UInt8(ascii: "*"), String(items.count))
            for item in items { item.encode(into: &out) }
        }
    }

    /// A command as clients send it: an array of bulk strings.
    package static func command(_ parts: [String]) -> [UInt8] { RESPValue.array(parts.map(RESPValue.bulk)).encoded }

    /// Simple strings and errors cannot hold a line break: it is replaced by a space.
    private static func oneLine(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        for scalar in text.unicodeScalars { out.append(scalar == "\r" || scalar == "\n" ? " " : scalar) }
        return String(out)
    }
}

extension RESPValue {
    /// Whether this is an error answer (`-ERR …`).
    public var isErrorAnswer: Bool { if case .error = self { true } else { false } }

    /// Whether this is an error answer refusing a command for a passing reason, having run nothing:
    /// `LOADING` (a restarted server reading its data), `BUSY` (a script running too long), `MASTERDOWN`
    /// (a replica cut off from its master), and on a cluster `TRYAGAIN` (a slot moving) and
    /// `CLUSTERDOWN` (a failover under way). The same command may succeed shortly.
    package var isPassingRefusal: Bool {
        guard case .error(let message) = self else { return false }
        let code = message.prefix { $0 != " " }
        return code == "LOADING" || code == "BUSY" || code == "MASTERDOWN" || code == "TRYAGAIN" || code == "CLUSTERDOWN"
    }
}
