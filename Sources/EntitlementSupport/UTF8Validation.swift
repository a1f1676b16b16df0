/// Text from bytes that must be UTF-8: the string, or nil when they are not. The same answer as
/// `String(validating:as:)`, which reaches the standard library's unspecialized validator (generic
/// metadata looked up per call); here ASCII is checked in one pass and other text is decoded and
/// compared: valid UTF-8 decodes to its own bytes, anything repaired does not.
package enum UTF8Validation {
    /// The text of `bytes`, or nil when they are not UTF-8.
    package static func string(_ bytes: UnsafeBufferPointer<UInt8>) -> String? {
        var ascii = true
        for byte in bytes where byte >= 0x80 {
            ascii = false
            break
        }
        let text = String(decoding: bytes, as: UTF8.self)
        if ascii { return text }
        return text.utf8.elementsEqual(bytes) ? text : nil
    }

    /// The text of `bytes`, or nil when they are not UTF-8.
    package static func string(_ bytes: ArraySlice<UInt8>) -> String? { bytes.withUnsafeBufferPointer { string($0) } }

    /// The text of `bytes`, or nil when they are not UTF-8.
    package static func string(_ bytes: [UInt8]) -> String? { bytes.withUnsafeBufferPointer { string($0) } }
}
