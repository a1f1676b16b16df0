/// Base64url without padding (RFC 4648 §5), as redirect `state` values and signed tokens use it.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes `bytes` as unpadded base64url text.
    package static func encode(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
            out.append(alphabet[Int(chunk & 63)])
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            let chunk = UInt32(bytes[index]) << 16
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
        } else if rest == 2 {
            let chunk = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            out.append(alphabet[Int(chunk >> 18 & 63)])
            out.append(alphabet[Int(chunk >> 12 & 63)])
            out.append(alphabet[Int(chunk >> 6 & 63)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes unpadded base64url text; nil for anything else (padding, other alphabets, bad length,
    /// unused low bits that are not zero).
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// The value of one base64url character, or 255.
    private static let values: [UInt8] = {
        var table = [UInt8](repeating: 255, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }()

    /// Decodes unpadded base64url from UTF-8 bytes, four characters at a time.
    package static func decode(bytes text: UnsafeBufferPointer<UInt8>) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(text.count * 3 / 4)
        var bits: UInt32 = 0
        var held = 0
        let table = values  // one access to the global, not one per character
        for byte in text {
            let value = table[Int(byte)]
            guard value != 255 else { return nil }
            bits = bits << 6 | UInt32(value)
            held += 1
            if held == 4 {
                out.append(UInt8(truncatingIfNeeded: bits >> 16))
                out.append(UInt8(truncatingIfNeeded: bits >> 8))
                out.append(UInt8(truncatingIfNeeded: bits))
                bits = 0
                held = 0
            }
        }
        // Canonical form only: the unused low bits of the last character must be zero.
        switch held {
        case 2:
            guard bits & 0xF == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: bits >> 4))
        case 3:
            guard bits & 0x3 == 0 else { return nil }
            out.append(UInt8(truncatingIfNeeded: bits >> 10))
            out.append(UInt8(truncatingIfNeeded: bits >> 2))
        default: break
        }
        return out
    }
}

/// Standard base64 with padding (RFC 4648 §4), as REST API V2's headers carry values
/// (`AP-Device-Identifier: fingerprint <base64>`, `X-Device-Info`).
package enum Base64 {
    /// Encodes `bytes` as padded base64 text.
    package static func encode(_ bytes: [UInt8]) -> String {
        var text = Base64URL.encode(bytes).map { $0 == "-" ? "+" : $0 == "_" ? "/" : $0 }
        while text.count % 4 != 0 { text.append("=") }
        return String(text)
    }

    /// Decodes padded base64 text in canonical form; nil for anything else.
    package static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.count % 4 == 0, !text.contains("-"), !text.contains("_") else { return nil }
        var body = Substring(text)
        var padding = 0
        while body.last == "=", padding < 2 {
            body = body.dropLast()
            padding += 1
        }
        guard !body.contains("=") else { return nil }
        let bytes = Base64URL.decode(String(body.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 }))
        guard let bytes, encode(bytes) == text else { return nil }
        return bytes
    }
}
