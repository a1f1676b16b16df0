import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import EntitlementTestSupport
import Testing

@Suite("HMAC-SHA-256 (RFC 4231) and the media token verifier")
struct MediaTokenTests {
    static func bytes(_ hex: String) -> [UInt8] {
        var out: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            out.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return out
    }

    // RFC 4231 §4.2–4.8 (HMAC-SHA-256 results; case 5 is truncated to 128 bits).
    @Test(arguments: [
        ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8), "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
        (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
        ([UInt8](repeating: 0xaa, count: 20), [UInt8](repeating: 0xdd, count: 50), "773ea91e36800e46854db8ebd09181a72959098b3ef8c122d9635514ced565fe"),
        (Array(1...25), [UInt8](repeating: 0xcd, count: 50), "82558a389a443c0ea4cc819899f2083a85f0faa3e578f8077a2e3ff46729665b"),
        ([UInt8](repeating: 0x0c, count: 20), Array("Test With Truncation".utf8), "a3b6167473100ee06e0c796c2955552b"),
        ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ([UInt8](repeating: 0xaa, count: 131), Array("This is a test using a larger than block-size key and a larger than block-size data. The key needs to be hashed before being used by the HMAC algorithm.".utf8), "9b09ffa71b942fcb27635fbcd5b0e944bfdc63644f0713938a7f51535c3a35e2"),
    ])
    func rfc4231(key: [UInt8], data: [UInt8], expected: String) {
        let code = HMACSHA256.authenticationCode(for: data, key: key)
        expectEqual(Hex.encode(Array(code.prefix(expected.count / 2))), expected)
        #expect(HMACSHA256.isValid(code, for: data, key: key))
        var tampered = code
        tampered[31] ^= 1
        #expect(!HMACSHA256.isValid(tampered, for: data, key: key))
        #expect(!HMACSHA256.isValid(Array(code.prefix(16)), for: data, key: key))
    }

    @Test func base64URLDecodesCanonicalTextOnly() {
        for length in 0..<10 {
            let bytes = (0..<length).map { UInt8($0 * 37 & 0xFF) }
            expectEqual(Base64URL.decode(Base64URL.encode(bytes)), bytes)
        }
        #expect(Base64URL.decode("Zg==") == nil, "padding is not base64url")
        #expect(Base64URL.decode("Zh") == nil, "non-zero unused bits")
        #expect(Base64URL.decode("a+b/") == nil, "the standard alphabet")
        #expect(Base64URL.decode("A") == nil)
    }

    let key = Array("a-shared-signing-key".utf8)
    let clock = ManualClock()
    var claims: MediaTokenVerifier.Claims {
        MediaTokenVerifier.Claims(
            tokenID: "t1", sessionGUID: "guid-1", requestorID: "req", resourceID: "news", issued: clock.now(), timeToLive: 420_000,
            mvpdID: "acme")
    }

    /// Authentic tokens whose payload is not exactly the seven claims are refused as malformed.
    @Test(arguments: [
        #"{"guid":"g","id":"t","issued":1,"mvpd":"m","requestor":"req","resource":"news"}"#,  // six claims
        #"{"extra":1,"guid":"g","id":"t","issued":1,"mvpd":"m","requestor":"req","resource":"news","ttl":5}"#,  // eight
        #"{"guid":"g","id":"t","issued":1,"mvpd":"m","requestor":"req","resource":"news","resource":"news"}"#,  // a key twice
        #"{"guid":"g","id":"t","issued":1,"mvpd":"m","requestor":"req","resource":"news","ttl":0}"#,  // no lifetime
        #"{"guid":"g","id":"t","issued":"1","mvpd":"m","requestor":"req","resource":"news","ttl":5}"#,  // a string time
        #"{"guid":"g","id":"t","issued":1,"mvpd":"m","requestor":"req","resource":"news","ttl":5} x"#,  // trailing text
        #"["guid","id","issued","mvpd","requestor","resource","ttl"]"#,  // not an object
        #"{"guid":"g","id":"t","issued":1,"mvpd":"m","requestor":"req","resource":"news","t\qtl":5}"#,  // a key with a bad escape
        #"{"guid":"g","id":"t","issued":1,"mvpd":"m","requestor":"req","resource":"news","ttl":5,"ttl":5}"#,  // the lifetime twice
    ])
    func authenticPayloadsOfTheWrongShapeAreMalformed(payload: String) {
        let verifier = MediaTokenVerifier(key: key, clock: clock)
        let bytes = Array(payload.utf8)
        let token = Base64URL.encode(bytes) + "." + Base64URL.encode(HMACSHA256.authenticationCode(for: bytes, key: key))
        expectEqual(verifier.verify(token, resource: nil, requestor: "req"), .invalidFormat)
    }

    /// Keys are read as JSON: an escaped key is the claim it spells, its bytes or escapes alike.
    @Test func anEscapedKeyIsTheClaimItSpells() {
        let verifier = MediaTokenVerifier(key: key, clock: clock)
        let payload = #"{"gu\u0069d":"g","id":"t","issued":0,"mvpd":"m","requestor":"req","resource":"n\u00e9ws","\u0074tl":5000}"#
        let bytes = Array(payload.utf8)
        let token = Base64URL.encode(bytes) + "." + Base64URL.encode(HMACSHA256.authenticationCode(for: bytes, key: key))
        guard case .success(let read) = verifier.claims(token) else {
            Issue.record("an escaped key must be read: \(verifier.claims(token))")
            return
        }
        #expect(read.sessionGUID == "g" && read.resourceID == "néws" && read.timeToLive == 5000)
    }

    @Test func verdicts() async {
        let verifier = MediaTokenVerifier(key: key, clock: clock)
        let token = MediaTokenVerifier.sign(claims, key: key)
        expectEqual(verifier.verify(token, resource: "news", requestor: "req"), .valid)
        expectEqual(verifier.verify(token, resource: nil, requestor: "req"), .valid)
        expectEqual(verifier.verify(token, resource: "sports", requestor: "req"), .wrongResource)
        expectEqual(verifier.verify(token, resource: "news", requestor: "other"), .wrongRequestor)
        expectEqual(verifier.verify(MediaTokenVerifier.sign(claims, key: Array("another key".utf8)), resource: "news", requestor: "req"), .invalidSignature)
        expectEqual(verifier.verify("not a token", resource: "news", requestor: "req"), .invalidFormat)
        expectEqual(verifier.verify(token + ".x", resource: "news", requestor: "req"), .invalidFormat)
        let parts = token.split(separator: ".")
        var changed = claims
        changed.resourceID = "sports"
        let swappedPayload = MediaTokenVerifier.sign(changed, key: key).split(separator: ".")[0] + "." + parts[1]
        expectEqual(verifier.verify(String(swappedPayload), resource: "sports", requestor: "req"), .invalidSignature)
        await clock.advance(by: .milliseconds(420_000 + 29_999))
        expectEqual(verifier.verify(token, resource: "news", requestor: "req"), .valid, "within the leeway")
        await clock.advance(by: .milliseconds(1))
        expectEqual(verifier.verify(token, resource: "news", requestor: "req"), .expired)
        let future = MediaTokenVerifier.Claims(
            tokenID: "t2", sessionGUID: "g", requestorID: "req", resourceID: "news", issued: clock.now().adding(.seconds(31)),
            timeToLive: 420_000, mvpdID: "acme")
        expectEqual(verifier.verify(MediaTokenVerifier.sign(future, key: key), resource: "news", requestor: "req"), .expired, "issued in the future")
        if case .success(let read) = verifier.claims(token) { #expect(read.mvpdID == "acme" && read.timeToLive == 420_000) }
    }

    @Test func theMediaTokenFromSetTokenVerifiesBeforePlayback() async throws {
        // Cookbook F.3: the programmer's backend verifies the token before it releases the stream.
        let session = SimulatedSession()
        await session.signIn("erin", password: "evergreen", provider: "delta-satellite")
        await session.enabler.getAuthorization("movies-hd")
        let token = try #require(await session.collectIgnoringTracking().compactMap { callback -> String? in
            if case .setToken(let token, _) = callback { return token }
            return nil
        }.first)
        let verifier = MediaTokenVerifier(key: SimulatedWorld.default.mediaTokenKey, clock: session.clock)
        expectEqual(verifier.verify(token, resource: "movies-hd", requestor: "sim-requestor"), .valid)
        expectEqual(verifier.verify(token, resource: "news-channel", requestor: "sim-requestor"), .wrongResource)
        expectEqual(verifier.verify(token, resource: "movies-hd", requestor: "sim-news"), .wrongRequestor)
        guard case .success(let claims) = verifier.claims(token) else { return }
        #expect(claims.mvpdID == "delta-satellite" && claims.timeToLive == 420_000)
        await session.clock.advance(by: .seconds(451))
        expectEqual(verifier.verify(token, resource: "movies-hd", requestor: "sim-requestor"), .expired, "7 minutes plus the leeway")
        await session.expectClean()
    }
}
