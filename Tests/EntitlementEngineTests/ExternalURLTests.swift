import EntitlementEngine
import Testing

@Suite("RFC 3986 percent-encoding and strict external-URL parsing")
struct ExternalURLTests {
    @Test func unreservedCharactersPassThrough() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        #expect(PercentEncoding.encode(unreserved) == unreserved)
    }

    @Test(arguments: [
        (" ", "%20"), ("/", "%2F"), ("?", "%3F"), ("&", "%26"), ("=", "%3D"), ("+", "%2B"), ("%", "%25"),
        (":", "%3A"), ("#", "%23"), ("é", "%C3%A9"), ("adobepass://ios.app", "adobepass%3A%2F%2Fios.app"),
    ])
    func reservedAndNonASCIIAreEscaped(text: String, encoded: String) throws {
        #expect(PercentEncoding.encode(text) == encoded)
        #expect(try PercentEncoding.decode(encoded[...]) == text)
    }

    @Test func decodingIsStrict() {
        #expect(throws: PercentEncoding.DecodingError.badEscape) { try PercentEncoding.decode("%2"[...]) }
        #expect(throws: PercentEncoding.DecodingError.badEscape) { try PercentEncoding.decode("%zz"[...]) }
        #expect(throws: PercentEncoding.DecodingError.notUTF8) { try PercentEncoding.decode("%FF"[...]) }
        #expect((try? PercentEncoding.decode("a+b"[...])) == "a+b")
        #expect((try? PercentEncoding.decode("%c3%a9"[...])) == "é")
    }

    @Test func parsesBaseAndParameters() throws {
        let url = try ExternalURL.parse("adobepass://ios.app?code=c%2B1&state=s&mvpd=acme-cable&empty=")
        #expect(url.base == "adobepass://ios.app")
        #expect(url.parameters == ["code": "c+1", "state": "s", "mvpd": "acme-cable", "empty": ""])
    }

    @Test(arguments: [
        ("", "malformed"), ("adobepass://ios.app?a=1&a=2", "duplicate"), ("adobepass://ios.app?state=a&state=b", "duplicate"),
        ("adobepass://ios.app?code=%zz", "malformed"), ("adobepass://ios.app#code=1", "malformed"),
        ("adobepass://ios.app?code=1 ", "malformed"), ("adobepass://ios.app?code=1\n", "malformed"),
        ("no scheme here", "malformed"), ("://ios.app", "malformed"), ("adobepass://ios.app?a=1&&b=2", "malformed"),
        ("adobepass://ios.app?=1", "malformed"),
    ])
    func refusesAmbiguousURLs(raw: String, kind: String) {
        do {
            _ = try ExternalURL.parse(raw)
            Issue.record("accepted \(raw)")
        } catch {
            switch (error, kind) {
            case (.duplicateParameter, "duplicate"), (.malformedURL, "malformed"): break
            default: Issue.record("\(raw): \(error), expected \(kind)")
            }
        }
    }

    @Test func refusesOverlongURLs() {
        let long = "adobepass://ios.app?code=" + String(repeating: "a", count: ExternalURL.maximumLength)
        #expect(throws: RedirectRefusal.self) { try ExternalURL.parse(long) }
    }

    @Test func redactorShortensSecretsOnly() {
        let url = "adobepass://ios.app?code=abcdefgh&state=12345678&mvpd=acme-cable"
        #expect(Redactor.redactURL(url) == "adobepass://ios.app?code=abcd…&state=1234…&mvpd=acme-cable")
        let nested = "https://mvpd.sim/logout?continue=" + PercentEncoding.encode("https://sp.sim/done?logout=secretvalue")
        #expect(!Redactor.redactURL(nested).contains("secretvalue"))
    }
}
