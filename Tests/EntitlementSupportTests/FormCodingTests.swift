import EntitlementSupport
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
        #expect(FormCoding.decode(Substring(form)) == fields)
    }

    @Test func aStrictDecodeRefusesABadFieldOrARepeatedName() {
        #expect(throws: FormCoding.StrictDecodingError.undecodable) { try FormCoding.decodeStrictly("a=%zz") }
        #expect(throws: FormCoding.StrictDecodingError.repeated("a")) { try FormCoding.decodeStrictly("a=1&a=2") }
        #expect((try? FormCoding.decodeStrictly("a=1&b=%20")) == ["a": "1", "b": " "])
    }

    @Test func whatIsEncodedDecodesToItself() {
        let fields = [("name", "Zoë & co"), ("note", "100% = a+b"), ("empty", "")]
        let decoded = FormCoding.decode(Substring(FormCoding.encode(fields)))
        #expect(decoded == Dictionary(uniqueKeysWithValues: fields))
    }

    /// A megabyte of form decodes in one pass: its fields all arrive (the length is the cost; the probe
    /// in the note measures the time).
    @Test func aMegabyteFormDecodes() {
        let form = (0..<40_000).map { "field\($0)=value+\($0)%21" }.joined(separator: "&")
        let fields = FormCoding.decode(Substring(form))
        #expect(fields.count == 40_000 && fields["field39999"] == "value 39999!")
    }
}
