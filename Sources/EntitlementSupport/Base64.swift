/// Base64url without padding (RFC 4648 §5), as redirect `state` values and signed tokens use it.
package enum Base64URL {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)

    /// Encodes `bytes` as unpadded base64url text.
    package static func encode(_ bytes: [UInt8]) -> String { encode(bytes, alphabet: alphabet, padded: false) }

    /// `bytes` in `alphabet` (64 ASCII characters), with `=` padding to a multiple of four when `padded`.
    static func encode(_ bytes: [UInt8], alphabet: [UInt8], padded: Bool) -> String {
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index + 3 <= bytes.count {
            let chunk: UInt32 = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8 | UInt32(bytes[index + 2])
            append(chunk, characters: 4, from: alphabet, to: &out)
            index += 3
        }
        let rest = bytes.count - index
        if rest == 1 {
            append(UInt32(bytes[index]) << 16, characters: 2, from: alphabet, to: &out)
        } else if rest == 2 {
            let chunk: UInt32 = UInt32(bytes[index]) << 16 | UInt32(bytes[index + 1]) << 8
            append(chunk, characters: 3, from: alphabet, to: &out)
        }
        if padded { while out.count % 4 != 0 { out.append(UInt8(ascii: "=")) } }
        return String(decoding: out, as: UTF8.self)
    }

    /// Appends the first `characters` of the four six-bit groups of the 24-bit `chunk`, in `alphabet`.
    private static func append(_ chunk: UInt32, characters: Int, from alphabet: [UInt8], to out: inout [UInt8]) {
        var shift: UInt32 = 18
        for _ in 0..<characters {
            out.append(alphabet[Int((chunk >> shift) & 63)])
            shift &-= 6
        }
    }

    /// Decodes unpadded base64url text; nil for anything else (padding, other alphabets, bad length,
    /// unused low bits that are not zero).
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { decode(bytes: $0) }
    }

    /// The value of one base64url character, or 255.
    private static let values = values(of: alphabet)

    /// The value of each byte that is a character of `alphabet`, and 255 for every other byte.
    static func values(of alphabet: [UInt8]) -> [UInt8] {
        var table = [UInt8](repeating: 255, count: 256)
        for (value, byte) in alphabet.enumerated() { table[Int(byte)] = UInt8(value) }
        return table
    }

    /// Decodes unpadded base64url from UTF-8 bytes, four characters at a time, into an array made
    /// at its final size.
    package static func decode(bytes text: UnsafeBufferPointer<UInt8>) -> [UInt8]? { decode(bytes: text, values: values) }

    /// Decodes unpadded text whose characters `values` (``values(of:)``) gives, in canonical form only.
    static func decode(bytes text: UnsafeBufferPointer<UInt8>, values: [UInt8]) -> [UInt8]? {
        guard text.count % 4 != 1 else { return nil }
        let whole = text.count / 4, tail = text.count % 4
        let size = whole * 3 + (tail == 0 ? 0 : tail - 1)
        var out = [UInt8](repeating: 0, count: size)  // (the uninitialized-capacity form looks up generic metadata per call)
        let valid = values.withUnsafeBufferPointer { table in
            out.withUnsafeMutableBufferPointer { out in
                // A character outside the alphabet reads 255, which sets bit 7 of `check`.
                var check: UInt8 = 0
                var index = 0, written = 0
                for _ in 0..<whole {
                    let v0 = table[Int(text[index])], v1 = table[Int(text[index + 1])]
                    let v2 = table[Int(text[index + 2])], v3 = table[Int(text[index + 3])]
                    check |= v0 | v1 | v2 | v3
                    let bits: UInt32 = UInt32(v0) << 18 | UInt32(v1) << 12 | UInt32(v2) << 6 | UInt32(v3)
                    out[written] = UInt8(truncatingIfNeeded: bits >> 16)
                    out[written + 1] = UInt8(truncatingIfNeeded: bits >> 8)
                    out[written + 2] = UInt8(truncatingIfNeeded: bits)
                    index += 4
                    written += 3
                }
                // Canonical form only: the unused low bits of the last character must be zero.
                if tail == 2 {
                    let v0 = table[Int(text[index])], v1 = table[Int(text[index + 1])]
                    check |= v0 | v1 | (v1 & 0xF == 0 ? 0 : 0x80)
                    out[written] = v0 << 2 | (v1 & 0x3F) >> 4
                    written += 1
                } else if tail == 3 {
                    let v0 = table[Int(text[index])], v1 = table[Int(text[index + 1])], v2 = table[Int(text[index + 2])]
                    check |= v0 | v1 | v2 | (v2 & 0x3 == 0 ? 0 : 0x80)
                    out[written] = v0 << 2 | (v1 & 0x3F) >> 4
                    out[written + 1] = v1 << 4 | (v2 & 0x3F) >> 2
                    written += 2
                }
                return check & 0x80 == 0
            }
        }
        return valid ? out : nil
    }
}

/// Standard base64 with padding (RFC 4648 §4), as REST API V2's headers carry values
/// (`AP-Device-Identifier: fingerprint <base64>`, `X-Device-Info`).
package enum Base64 {
    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
    private static let values = Base64URL.values(of: alphabet)

    /// Encodes `bytes` as padded base64 text.
    package static func encode(_ bytes: [UInt8]) -> String { Base64URL.encode(bytes, alphabet: alphabet, padded: true) }

    /// Decodes padded base64 text in canonical form (the padding the length needs, unused bits zero);
    /// nil for anything else.
    package static func decode(_ text: String) -> [UInt8]? {
        var text = text
        return text.withUTF8 { bytes -> [UInt8]? in
            guard bytes.count % 4 == 0 else { return nil }
            var body = bytes.count
            while body > 0, bytes.count - body < 2, bytes[body - 1] == UInt8(ascii: "=") { body -= 1 }
            // Exactly the padding the body's length needs: `Zg==`, `Zm8=`, never `Zm9v=` or `Zg=`.
            guard (4 - body % 4) % 4 == bytes.count - body else { return nil }
            return Base64URL.decode(bytes: UnsafeBufferPointer(rebasing: bytes[..<body]), values: values)
        }
    }
}
