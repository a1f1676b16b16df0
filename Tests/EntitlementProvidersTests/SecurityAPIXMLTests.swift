import EntitlementProviders
import EntitlementSupport
import EntitlementTestSupport
import Testing

/// The Security API's XML: the specification's answers read, anything else refused with a typed
/// failure — never a trap, whatever the bytes.
@Suite("Security API XML")
struct SecurityAPIXMLTests {
    static func parse(_ text: String) throws(SecurityAPIXML.Failure) -> SecurityAPIXML.Element {
        try SecurityAPIXML.parse(Array(text.utf8))
    }

    @Test func theSpecificationsAnswersAreRead() throws {
        try expectEqual(Self.parse("<token>abc123</token>").text, "abc123")
        let error = try Self.parse(#"<?xml version="1.0"?><error status="notrecognised" message="Credentials not recognised"/>"#)
        #expect(error.name == "error" && error.attributes == ["status": "notrecognised", "message": "Credentials not recognised"])
        let subscription = try Self.parse(
            """
            <subscription state="active" message="Gold &amp; more &#x263A;">
              <!-- issues -->
              <issue id="issue-1"/><issue id='issue-2'></issue>
            </subscription>
            """)
        expectEqual(subscription.attributes["message"], "Gold & more ☺")
        expectEqual(subscription.children.map { $0.attributes["id"] }, ["issue-1", "issue-2"])
        let credentials = try Self.parse("<credentials><userid> ann </userid><password>p&lt;w</password></credentials>")
        #expect(credentials.child("userid")?.text == "ann" && credentials.child("password")?.text == "p<w")
    }

    @Test(arguments: [
        "", "token", "<token>", "<token></tokens>", "<a b=c/>", "<a b='1' b='2'/><b/>", "<!DOCTYPE x><x/>",
        "<a>&bogus;</a>", "<a>&#0;</a>", "<a>&#xFFFFFFFF;</a>", "<a>&#1;</a>", "<a>\u{1}</a>", "<a b=\"x\u{1B}\"/>",
        "<a>&#xFFFE;</a>", "<a><</a>", "<a b=\"<\"/>", "<a/>trailing",
        String(repeating: "<a>", count: 40) + String(repeating: "</a>", count: 40),
    ])
    func malformedAnswersAreRefusedWithAReason(text: String) {
        #expect(throws: SecurityAPIXML.Failure.self) { try Self.parse(text) }
    }

    @Test func anAnswerOverTheLimitIsRefusedUnread() {
        let big = "<token>" + String(repeating: "x", count: SecurityAPIXML.sizeLimit) + "</token>"
        #expect(throws: SecurityAPIXML.Failure.self) { try Self.parse(big) }
    }

    /// Seeded random bytes and mutations of valid answers: every one parses or fails with a reason.
    @Test(.backgroundThread) func noInputTraps() {
        var random = SplitMix64(seed: 0x9E37_79B9_7F4A_7C15)
        func next() -> UInt64 { random.next() }
        let seeds = [
            Array(#"<subscription state="active" message="m"><issue id="a"/></subscription>"#.utf8),
            Array("<credentials><userid>u</userid><password>p&amp;q</password></credentials>".utf8),
            Array(#"<error status="invalidtoken" message="x"/>"#.utf8),
        ]
        let alphabet = Array("<>/=\"'&;#x?!- abc".utf8) + [0, 0xFF, 0xC3]
        var parsed = 0
        for round in 0..<20_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0..<(1 + Int(next() % 4)) {
                let position = Int(next() % UInt64(bytes.count + 1))
                switch next() % 3 {
                case 0 where position < bytes.count: bytes.remove(at: position)
                case 1: bytes.insert(alphabet[Int(next() % UInt64(alphabet.count))], at: position)
                default: if position < bytes.count { bytes[position] = UInt8(truncatingIfNeeded: next()) }
                }
            }
            if (try? SecurityAPIXML.parse(bytes)) != nil { parsed += 1 }
        }
        #expect(parsed > 0 && parsed < 20_000, "some mutations still parse, most do not (\(parsed))")
    }
}
