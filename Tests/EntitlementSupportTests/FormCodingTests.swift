import EntitlementSupport
import EntitlementTestSupport
import Testing

/// The form decoder against the WHATWG URL standard's `application/x-www-form-urlencoded` parser.
@Suite("Form coding")
struct FormCodingTests {
    @Test(arguments: [
        ("a=1&b=2", ["a": "1", "b": "2"]),
        ("a=x+y&b=%2B%20", ["a": "x y", "b": "+ "]),
        ("&&a=1&&", ["a": "1"]),
        ("flag&b=", ["flag": "", "b": ""]),
        ("a=b=c", ["a": "b=c"]),
        ("a=1&a=2", ["a": "1"]),
        ("bad=%4&good=%41", ["good": "A"]),
        ("bad=%FF&name=%C3%A9", ["name": "é"]),
        ("=v", ["": "v"]),
        ("", [:]),
        // The standard splits bytes: an `&` a combining mark follows still ends its pair.
        ("a=1&\u{301}b=2", ["a": "1", "\u{301}b": "2"]),
    ])
    func formsDecodeAsTheStandardSays(form: String, fields: [String: String]) {
        expectEqual(FormCoding.decode(Substring(form)), fields)
    }

    @Test func aStrictDecodeRefusesABadFieldOrARepeatedName() {
        #expect(throws: FormCoding.StrictDecodingError.undecodable) { try FormCoding.decodeStrictly("a=%zz") }
        #expect(throws: FormCoding.StrictDecodingError.repeated("a")) { try FormCoding.decodeStrictly("a=1&a=2") }
        expectEqual((try? FormCoding.decodeStrictly("a=1&b=%20")), ["a": "1", "b": " "])
    }

    @Test func whatIsEncodedDecodesToItself() {
        let fields = [("name", "Zoë & co"), ("note", "100% = a+b"), ("empty", "")]
        let decoded = FormCoding.decode(Substring(FormCoding.encode(fields)))
        expectEqual(decoded, Dictionary(uniqueKeysWithValues: fields))
    }

    /// A form of thousands of fields is read for its first ``FormCoding/fieldLimit`` only (each field read
    /// costs two strings and a table entry; the probe in the note measures what that spares the
    /// other clients); a strict decode refuses it. A megabyte in few fields decodes whole.
    @Test func aFormIsReadForItsFirstFieldsOnly() {
        let form = (0..<40_000).map { "field\($0)=value+\($0)%21" }.joined(separator: "&")
        let fields = FormCoding.decode(Substring(form))
        #expect(fields.count == FormCoding.fieldLimit && fields["field255"] == "value 255!" && fields["field256"] == nil)
        #expect(throws: FormCoding.StrictDecodingError.tooManyFields) { try FormCoding.decodeStrictly(Substring(form)) }
        let atTheLimit = (0..<FormCoding.fieldLimit).map { "f\($0)=\($0)" }.joined(separator: "&")
        expectEqual((try? FormCoding.decodeStrictly(Substring(atTheLimit)))?.count, FormCoding.fieldLimit)
        let big = "client_id=" + String(repeating: "a%41+", count: 200_000) + "&grant_type=client_credentials"
        let read = FormCoding.decode(Substring(big))
        #expect(read["client_id"]?.utf8.count == 600_000 && read["grant_type"] == "client_credentials")
    }
}
