/// Bytes that must never pass through a URL or a log line unnoticed: ASCII whitespace and controls,
/// C1 controls, Unicode line and paragraph separators, bidirectional controls and the byte-order
/// mark — everything that can hide, reorder or split text — found on the UTF-8 bytes.
enum UnicodeHazards {
    /// Whether `bytes` (UTF-8) hold any hazard; a plain space counts only when `spaceAllowed` is false.
    static func containsHazard(_ bytes: ArraySlice<UInt8>, spaceAllowed: Bool = false) -> Bool {
        firstHazard(in: bytes, spaceAllowed: spaceAllowed) != nil
    }

    /// The range of the first hazard in `bytes` (UTF-8), if any.
    static func firstHazard(in bytes: ArraySlice<UInt8>, spaceAllowed: Bool = false) -> Range<Int>? {
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if spaceAllowed && bytes[index] == 0x20 {
                index += 1
                continue
            }
            let length = hazardLength(bytes, at: index)
            if length > 0 { return index..<(index + length) }
            index += 1
        }
        return nil
    }

    /// The length of the hazard starting at `index`, or 0.
    static func hazardLength(_ bytes: ArraySlice<UInt8>, at index: Int) -> Int {
        let byte = bytes[index]
        if byte <= 0x20 || byte == 0x7F { return 1 }
        let next = index + 1 < bytes.endIndex ? bytes[index + 1] : 0
        let third = index + 2 < bytes.endIndex ? bytes[index + 2] : 0
        switch byte {
        case 0xC2 where (0x80...0xA0).contains(next):  // C1 controls U+0080–U+009F, NBSP U+00A0
            return 2
        case 0xE2 where next == 0x80 && ((0x8B...0x8F).contains(third) || (0xA8...0xAE).contains(third)):
            return 3  // zero-width U+200B–U+200F, separators U+2028/2029, bidi U+202A–U+202E
        case 0xE2 where next == 0x81 && (0xA0...0xAF).contains(third):
            return 3  // word joiner, invisible operators, bidi isolates U+2060–U+206F
        case 0xEF where next == 0xBB && third == 0xBF:
            return 3  // byte-order mark U+FEFF
        default:
            return 0
        }
    }
}
