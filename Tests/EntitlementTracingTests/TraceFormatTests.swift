import EntitlementEngine
import EntitlementSupport
import EntitlementTracing
import Foundation
import EntitlementTestSupport
import Testing

@Suite("Trace format: canonical JSON, strict reading, placeholders")
struct TraceFormatTests {
    static let header =
        #"{"device":"d","engine":"0.1.0","format":"2.0","machine":"x","recorded_with":"t","settings":{},"start":0,"trace":"header"}"#

    @Test func theWriterIsCanonicalAndAgreesWithJSONEncoder() throws {
        let value: JSONValue = [
            "b": [1, "two", true, .null, ["z": "é\u{1}\"\\/"]], "a": -42, "ä": "x", "A": [:], "c": "line\nbreak\ttab",
        ]
        expectEqual(value.canonicalText, #"{"A":{},"a":-42,"b":[1,"two",true,null,{"z":"é\u0001\"\\/"}],"c":"line\nbreak\ttab","ä":"x"}"#)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let foundation = String(decoding: try encoder.encode(value), as: UTF8.self)
        try expectEqual(JSONReader.read(foundation), value)
        try expectEqual(JSONReader.read(value.canonicalText), value)
    }

    @Test(arguments: [
        ("01", "a number with a leading zero"), ("1.", "a fraction without digits"), ("[1,]", "unexpected character"),
        (#"{"a":1,"a":2}"#, "the key 'a' twice"), (#""\x""#, "an unknown escape"), ("[1] 2", "unexpected text after the value"),
        (#"{"a":"b"#, "an unterminated string"), ("", "unexpected end"),
    ])
    func theReaderRefusesWhatTracesNeverHold(text: String, reason: String) {
        #expect(throws: JSONReader.Failure.self) { try JSONReader.read(text) }
        do {
            _ = try JSONReader.read(text)
        } catch {
            #expect(error.description.hasPrefix(reason), "\(error)")
        }
    }

    /// Every timer a machine starts reads back from a trace as it fired (a trace holding one it cannot
    /// read is refused whole).
    @Test func everyTimerReadsBackAsItFired() throws {
        let operation = OperationID(7, owner: .authorization)
        let timers: [TimerID] = [
            .redirectDeadline(FlowID(1)), .registrationPoll(FlowID(2)), .registrationExpiry(FlowID(3)), .profileRead(FlowID(4)),
            .retry(operation), .providerVerification("magazine"), .stepUp(operation), .renewalElsewhere("magazine"),
            .requestDeadline(operation),
        ]
        let recorder = TraceRecorder()
        recorder.observe(.started(EngineSettings(), deviceID: "d", at: Timestamp(milliseconds: 0)))
        for (index, timer) in timers.enumerated() {
            recorder.observe(.inputHandled(HandledInput(.timerFired(timer)), at: Timestamp(milliseconds: Int64(index))))
        }
        let trace = try Trace.parse(recorder.trace.text)
        let fired = trace.records.compactMap { record -> String? in
            guard record["in"]?.string == "timerFired" else { return nil }
            return [record["timer"]?.string, record["flow"].map(\.canonicalText), record["op"].map(\.canonicalText), record["provider"]?.string]
                .compactMap { $0 }.joined(separator: " ")
        }
        #expect(fired == [
            "redirectDeadline 1", "registrationPoll 2", "registrationExpiry 3", "profileRead 4", "retry 7", "providerVerification magazine",
            "stepUp 7", "renewalElsewhere magazine", "requestDeadline 7",
        ])
    }

    @Test func surrogatePairsAndUnicodeRoundTrip() throws {
        try expectEqual(JSONReader.read(#""\ud83d\ude00 \u00e9""#), .string("😀 é"))
        expectEqual(JSONValue.string("😀").canonicalText, "\"😀\"")
    }

    @Test(arguments: [
        ("", 1, "the first line must be the trace header"),
        (header + "\n" + #"{"in":"call","call":"logout","id":1,"seq":1,"t":0}"#, 2, "the file ends in the middle of a record"),
        (header + "\n" + #"{"in":"call","call":"logout","id":1,"seq":1,"t":0"# + "\n", 2, "not a JSON record"),
        (header + "\n" + #"{"in":"call","call":"logout","id":1,"seq":2,"t":0}"# + "\n", 2, "expected seq 1, found 2"),
        (header + "\n" + #"{"in":"call","call":"fly","id":1,"seq":1,"t":0}"# + "\n", 2, "the field 'call'"),
        (header + "\n" + #"{"in":"call","call":"logout","seq":1,"t":0}"# + "\n", 2, "the field 'id'"),
        (#"{"trace":"header","format":"3.0"}"# + "\n", 1, "trace format 3.0 is not supported"),
        // Format 1 recorded the v1-style port (code exchange, separate media tokens): refused, with the way out.
        (#"{"trace":"header","format":"1.0"}"# + "\n", 1, "trace format 1.0 is not supported: this engine reads format 2.x; re-record the session with this version"),
        (#"{"format":"2.0"}"# + "\n", 1, "the first line must be the trace header"),
        (#"{"trace":"header","format":"2.0","engine":"0.1.0"}"# + "\n", 1, "the field 'recorded_with'"),
    ])
    func damagedTracesAreRefusedWithLineAndReason(text: String, line: Int, reason: String) {
        do {
            _ = try Trace.parse(text)
            Issue.record("accepted a damaged trace")
        } catch {
            expectEqual(error.line, line, "\(error)")
            #expect(error.description.contains(reason), "\(error)")
        }
    }

    @Test func extensionFieldsAreIgnoredAndNewerMinorVersionsAccepted() throws {
        let text = Self.header.replacingOccurrences(of: #""format":"2.0""#, with: #""format":"2.7","_tool":{"x":1}"#) + "\n"
            + #"{"_note":"hand-added","in":"call","call":"logout","id":1,"seq":1,"t":0}"# + "\n"
        let trace = try Trace.parse(text)
        #expect(trace.records.first?["_note"] == nil)
        #expect(trace.header["_tool"] == nil)
    }

    @Test func personalDataAreConcealedUnlessTheBookKeepsThem() {
        var book = SecretBook()
        expectEqual(book.concealPersonal("alice-7f3a"), "<personal#1>")
        expectEqual(book.concealPersonal("device-9", as: .device), "<device#1>")
        expectEqual(book.concealPersonal("alice-7f3a"), "<personal#1>")
        // A replay notes the recorded placeholders, so what the machine derives next is numbered after them.
        book.notePlaceholders(in: "a://b?x=<personal#6>&y=<device#2>&z=<nothing#9>&w=<personal#x>")
        expectEqual(book.concealPersonal("derived"), "<personal#7>")
        expectEqual(book.concealPersonal("another device", as: .device), "<device#3>")
        // Found by their bytes: after a stray `<`, before a combining mark; not with no number or one beyond Int.
        book.notePlaceholders(in: "x < <media#4>\u{301} <media#> <media#99999999999999999999> <state#2")
        expectEqual(book.conceal("token", as: .media), "<media#5>")
        expectEqual(book.conceal("s", as: .state), "<state#1>")
        var keeping = SecretBook(keepingPersonalData: true)
        expectEqual(keeping.concealPersonal("alice-7f3a"), "alice-7f3a")
        expectEqual(keeping.conceal("s3cr3t", as: .state), "<state#1>", "secrets are concealed all the same")
    }

    @Test func placeholdersAreStableAndNumberedPerKind() {
        var book = SecretBook()
        expectEqual(book.conceal("s3cr3t", as: .state), "<state#1>")
        expectEqual(book.conceal("other", as: .state), "<state#2>")
        expectEqual(book.conceal("s3cr3t", as: .state), "<state#1>")
        expectEqual(book.conceal("tok", as: .media), "<media#1>")
        expectEqual(book.conceal("<code#7>", as: .code), "<code#7>", "a placeholder stays itself, and numbering goes on after it")
        expectEqual(book.conceal("", as: .code), "")
        let url = "adobepass://ios.app?code=abc&state=s3cr3t&mvpd=m&state=dup#code=frag"
        expectEqual(book.concealURL(url), "adobepass://ios.app?code=<code#8>&state=<state#1>&mvpd=m&state=<state#3>#code=<code#9>")
        // An undecodable value is concealed too, and keeps what makes it refused (a bad escape).
        expectEqual(book.concealURL("adobepass://ios.app?code=%zz"), "adobepass://ios.app?code=<code#10>%")
        // Names and delimiters in any encoding, nested URLs, any case: every secret is found.
        let hidden = "adobepass://ios.app?c%6Fde=abc&x=" + PercentEncoding.encode("https://a.b/c?STATE=s3cr3t&token=t0k3n")
        let concealed = book.concealURL(hidden)
        #expect(!concealed.contains("abc") && !concealed.contains("s3cr3t") && !concealed.contains("t0k3n"), "\(concealed)")
        expectEqual(SecretBook.encodePlaceholders(inURL: "a://b?code=<code#1>&x=<y>"), "a://b?code=%3Ccode%231%3E&x=<y>")
    }
}
