import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTestSupport
import Testing

@Suite("RFC 3986 percent-encoding and strict external-URL parsing")
struct ExternalURLTests {
    @Test func unreservedCharactersPassThrough() {
        let unreserved = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"
        expectEqual(PercentEncoding.encode(unreserved), unreserved)
    }

    @Test(arguments: [
        (" ", "%20"), ("/", "%2F"), ("?", "%3F"), ("&", "%26"), ("=", "%3D"), ("+", "%2B"), ("%", "%25"),
        (":", "%3A"), ("#", "%23"), ("é", "%C3%A9"), ("adobepass://ios.app", "adobepass%3A%2F%2Fios.app"),
    ])
    func reservedAndNonASCIIAreEscaped(text: String, encoded: String) throws {
        expectEqual(PercentEncoding.encode(text), encoded)
        try expectEqual(PercentEncoding.decode(encoded[...]), text)
    }

    @Test func decodingIsStrict() {
        #expect(throws: PercentEncoding.DecodingError.badEscape) { try PercentEncoding.decode("%2"[...]) }
        #expect(throws: PercentEncoding.DecodingError.badEscape) { try PercentEncoding.decode("%zz"[...]) }
        #expect(throws: PercentEncoding.DecodingError.notUTF8) { try PercentEncoding.decode("%FF"[...]) }
        expectEqual((try? PercentEncoding.decode("a+b"[...])), "a+b")
        expectEqual((try? PercentEncoding.decode("%c3%a9"[...])), "é")
    }

    @Test func parsesBaseAndParameters() throws {
        let url = try ExternalURL.parse("adobepass://ios.app?code=c%2B1&state=s&mvpd=acme-cable&empty=")
        expectEqual(url.base, "adobepass://ios.app")
        expectEqual(url.parameters, ["code": "c+1", "state": "s", "mvpd": "acme-cable", "empty": ""])
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
            let expected = kind == "duplicate" ? "REDIRECT_DUPLICATE_PARAMETER" : "REDIRECT_MALFORMED"
            expectEqual(error.code, expected, "\(raw): \(error), expected \(kind)")
        }
    }

    @Test func refusesOverlongURLs() {
        let long = "adobepass://ios.app?code=" + String(repeating: "a", count: ExternalURL.maximumLength)
        #expect(throws: RedirectRefusal.self) { try ExternalURL.parse(long) }
    }

    @Test func redactorShortensSecretsOnly() {
        let url = "adobepass://ios.app?code=abcdefgh&state=12345678901234567890&mvpd=acme-cable"
        // A short value (an 8-character session code) shows nothing; a long one its first four characters.
        expectEqual(Redactor.redact(url), "adobepass://ios.app?code=…&state=1234…&mvpd=acme-cable")
        expectEqual(Redactor.redact("https://sp.sim/api/v2/authenticate/sim-requestor/ZZEP9LCT"), "https://sp.sim/api/v2/authenticate/sim-requestor/…")
        let nested = "https://mvpd.sim/logout?continue=" + PercentEncoding.encode("https://sp.sim/done?logout=secretvalue")
        #expect(!Redactor.redact(nested).contains("secretvalue"))
    }
}

@Suite("External URLs are read as bytes", .checksExactlyOnce)
struct ExternalURLBytesTests {
    /// A combining mark after a delimiter made it a different Character, hiding it from the parser.
    @Test(arguments: [
        "adobepass://ios.app?code=c&state=s&x=#\u{301}", "adobepass://ios.app?code=c&state=s&\u{301}state=x",
        "adobepass://ios.app?code=c&state=s\u{2028}", "adobepass://ios.app?code=c&state=s\u{85}",
        "adobepass://ios.app?code=c&state=s\u{202E}", "adobepass://ios.app?code=c&state=s\u{FEFF}",
        "adobepass://ios.app?code=c&state=s%0A", "adobepass://ios.app?code=c&state=s%E2%80%A8",
    ])
    func hiddenDelimitersAndInvisibleCharactersAreRefused(raw: String) {
        #expect(throws: RedirectRefusal.self) { try ExternalURL.parse(raw) }
    }

    @Test func aCombiningMarkCannotHideADuplicate() throws {
        #expect(throws: RedirectRefusal.duplicateParameter("state")) {
            try ExternalURL.parse("adobepass://ios.app?code=c&state=s&st%61te=x")
        }
        // `&state=\u{301}x` is a second `state` (and raw non-ASCII is refused anyway).
        #expect(throws: RedirectRefusal.duplicateParameter("state")) {
            try ExternalURL.parse("adobepass://ios.app?code=c&state=s&state=%CC%81x")
        }
        #expect(throws: RedirectRefusal.self) { try ExternalURL.parse("adobepass://ios.app?code=c&state=s&state=\u{301}x") }
    }

    @Test func percentEncodedNamesAreTheNamesTheyEncode() throws {
        let url = try ExternalURL.parse("adobepass://ios.app?c%6Fde=abc&st%61te=xyz")
        expectEqual(url.parameters, ["code": "abc", "state": "xyz"])
    }

    @Test func aRedirectURLWithItsOwnQueryMatches() throws {
        let url = try ExternalURL.parse("myapp://cb?app=news&code=c&state=s")
        #expect(url.returns(to: "myapp://cb?app=news"))
        #expect(!url.returns(to: "myapp://cb?app=new"))
        #expect(!url.returns(to: "myapp://cb?app=sports"))
        #expect(!(try ExternalURL.parse("myapp://cb?code=c&app=news")).returns(to: "myapp://cb?app=news"))
    }

    @Test func aLoginCompletesWithARedirectURLThatHasAQuery() async {
        let session = SimulatedSession(settings: EngineSettings(redirectURL: "adobepass://ios.app?app=news"))
        await session.signIn()
        await session.enabler.handleExternalURL("adobepass://ios.app?app=sports&code=c&state=s")
        expectEqual(statusCode(await session.collect().first), "REDIRECT_URL_MISMATCH")
        await session.expectClean()
    }
}
