import EntitlementSupport
import EntitlementTestSupport
import Testing

/// The byte-level search and replace against the standard library's character-level forms.
struct ByteSearchTests {
    @Test(arguments: [
        ("", "abc", nil), ("abc", "", nil), ("abc", "abc", "…"), ("xxabcxx", "abc", "xx…xx"),
        ("abcabc", "abc", "……"), ("aaaa", "aa", "……"), ("aab", "ab", "a…"), ("ab", "abc", nil),
        ("état-é", "é", "…tat-…"), ("no match here", "zz", nil),
    ] as [(String, String, String?)])
    func replacesEveryOccurrence(text: String, target: String, expected: String?) {
        expectEqual(ByteSearch.replacing(target, with: "…", in: text), expected)
        expectEqual(ByteSearch.contains(target, in: text), (expected != nil || (target.isEmpty)))
    }

    /// A secret followed by a combining mark is one character more to `String.contains`, and not found
    /// there; by bytes it is found, and replaced.
    @Test func findsASecretFollowedByACombiningMark() {
        let text = "state=S3CR3Tx\u{301} was refused"
        #expect(!text.contains("S3CR3Tx"))
        expectEqual(ByteSearch.replacing("S3CR3Tx", with: "…", in: text), "state=…\u{301} was refused")
    }

    /// On ASCII texts without combining marks, both agree with the standard library.
    @Test func agreesWithTheStandardLibraryOnRandomASCII() {
        var generator = SplitMix64(seed: 7)
        let alphabet = Array("ab c")
        for _ in 0..<2_000 {
            let text = String((0..<Int(generator.next() % 24)).map { _ in alphabet[Int(generator.next() % 4)] })
            let target = String((1...Int(generator.next() % 3 + 1)).map { _ in alphabet[Int(generator.next() % 4)] })
            expectEqual(ByteSearch.contains(target, in: text), text.contains(target), "\(text) / \(target)")
            let replaced = text.contains(target) ? text.replacing(target, with: "…") : nil
            expectEqual(ByteSearch.replacing(target, with: "…", in: text), replaced, "\(text) / \(target)")
        }
    }
}

/// The validating decoder against the standard library's `String(validating:as:)`.
struct UTF8ValidationTests {
    @Test(arguments: [
        [], [0x41], [0xC3, 0xA9], [0xC3], [0xE2, 0x82, 0xAC], [0xED, 0xA0, 0x80], [0xC0, 0xAF], [0xF4, 0x90, 0x80, 0x80],
        [0xEF, 0xBF, 0xBD], [0xFF], [0x61, 0x80, 0x62], [0xF0, 0x9F, 0x98, 0x80],
    ] as [[UInt8]])
    func agreesOnKnownSequences(bytes: [UInt8]) {
        expectEqual(UTF8Validation.string(bytes), String(validating: bytes, as: UTF8.self))
    }

    @Test func agreesOnRandomBytes() {
        var generator = SplitMix64(seed: 11)
        let interesting: [UInt8] = [0x00, 0x41, 0x7F, 0x80, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0xA0, 0x9F]
        for _ in 0..<20_000 {
            let bytes = (0..<Int(generator.next() % 7)).map { _ in interesting[Int(generator.next() % UInt64(interesting.count))] }
            expectEqual(UTF8Validation.string(bytes), String(validating: bytes, as: UTF8.self), "\(bytes)")
        }
    }
}
