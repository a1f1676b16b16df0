import EntitlementEngine
import EntitlementSimulator
import EntitlementSupport
import Foundation
import EntitlementTestSupport
import Testing

@Suite("SHA-256, base64url and constant-time comparison against their standards' vectors")
struct CryptoTests {
    // NIST FIPS 180-4 example vectors (csrc.nist.gov, SHA256.pdf / SHA2_Additional).
    @Test(arguments: [
        ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
        (
            "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        ),
        (
            "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"
        ),
    ])
    func nistVectors(message: String, digest: String) {
        expectEqual(Hex.encode(SHA256.hash(message)), digest)
    }

    @Test func oneMillionTimesA() {
        var hasher = SHA256()
        let chunk = [UInt8](repeating: UInt8(ascii: "a"), count: 1000)
        for _ in 0..<1000 { hasher.update(chunk) }
        expectEqual(Hex.encode(hasher.finalize()), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
    }

    @Test func wholeBlocksSplitsAndNonContiguousInputAgree() {
        // One million 'a' in one contiguous buffer: whole blocks compressed where they lie.
        let million = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
        expectEqual(Hex.encode(SHA256.hash(million)), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        // A message fed in random pieces, and as a lazy (non-contiguous) sequence, hashes the same.
        let message = (0..<1000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let whole = SHA256.hash(message)
        let random = SeededRandomSource(seed: 42)
        for _ in 0..<50 {
            var hasher = SHA256()
            var offset = 0
            while offset < message.count {
                let size = min(message.count - offset, Int(random.bytes(1)[0]) % 130)
                hasher.update(message[offset..<(offset + size)])
                offset += size
            }
            expectEqual(hasher.finalize(), whole)
        }
        expectEqual(SHA256.hash(message.lazy.map { $0 }), whole)
        expectEqual(SHA256.hash(String(decoding: message.map { $0 & 0x7F }, as: UTF8.self)), SHA256.hash(message.map { $0 & 0x7F }))
    }

    @Test func paddingBoundaries() {
        // 55, 56 and 64 bytes straddle the length-field boundary; incremental and one-shot must agree.
        for length in [55, 56, 63, 64, 65, 119, 120] {
            let bytes = [UInt8](repeating: 0x61, count: length)
            var split = SHA256()
            split.update(bytes.prefix(length / 3))
            split.update(bytes.dropFirst(length / 3))
            expectEqual(split.finalize(), SHA256.hash(bytes), "length \(length)")
        }
        // NIST SHAVS short message: one byte 0xbd.
        expectEqual(Hex.encode(SHA256.hash([0xbd])), "68325720aabd7c82f30f554b313d0570c95accbb7dc4b5aae11204c08ffe732b")
    }

    // RFC 4648 §10 vectors, in the URL-safe alphabet without padding.
    @Test(arguments: [("", ""), ("f", "Zg"), ("fo", "Zm8"), ("foo", "Zm9v"), ("foob", "Zm9vYg"), ("fooba", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy")])
    func base64URLVectors(input: String, encoded: String) {
        expectEqual(Base64URL.encode(Array(input.utf8)), encoded)
    }

    @Test func base64URLRefusesWhatIsNotCanonical() {
        expectEqual(Base64URL.decode("Zg"), Array("f".utf8))
        #expect(Base64URL.decode("Zh") == nil, "unused low bits set")
        expectEqual(Base64URL.decode("Zm8"), Array("fo".utf8))
        #expect(Base64URL.decode("Zm9") == nil, "unused low bits set")
        #expect(Base64URL.decode("Zm-") == nil, "unused low bits set")
        #expect(Base64URL.decode("Zm9vY") == nil, "a length no encoding has")
        #expect(Base64URL.decode("Zm9v=") == nil && Base64URL.decode("Zm+v") == nil && Base64URL.decode("Zm v") == nil)
        expectEqual(Base64URL.decode(""), [])
    }

    /// Against the real counterparts: Python's `hashlib` and `hmac` on 300 random messages of every
    /// length up to 299 bytes (each split at a random point, so the unfinished block is exercised),
    /// and Foundation's base64 on the same bytes and on random text in the alphabet.
    @Test func randomMessagesAgreeWithPythonAndFoundation() throws {
        let random = SeededRandomSource(seed: 7)
        let key = random.bytes(20)
        let prepared = HMACSHA256.PreparedKey(key)
        var lines: [String] = [], ours: [String] = []
        for length in 0..<300 {
            let message = random.bytes(length)
            var hasher = SHA256()
            let cut = length == 0 ? 0 : Int(random.bytes(1)[0]) % (length + 1)
            hasher.update(message[..<cut])
            hasher.update(message[cut...])
            lines.append(Hex.encode(message))
            ours.append(Hex.encode(hasher.finalize()) + " " + Hex.encode(prepared.code(for: message)))
            #expect(prepared.isValid(HMACSHA256.authenticationCode(for: message, key: key), for: message))

            let padded = Data(message).base64EncodedString()
            expectEqual(Base64.encode(message), padded)
            expectEqual(Base64.decode(padded), message)
            if padded.hasSuffix("=") {
                #expect(Base64.decode(String(padded.dropLast())) == nil, "padding missing")
                #expect(Base64.decode(padded + "====") == nil, "padding beyond the length's")
            }
            let foundation = padded
                .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
                .replacingOccurrences(of: "=", with: "")
            expectEqual(Base64URL.encode(message), foundation)
            expectEqual(Base64URL.decode(foundation), message)
        }
        let script = """
            import hashlib, hmac, sys
            key = bytes.fromhex(sys.argv[1])
            for line in open(sys.argv[2]).read().split("\\n"):
                m = bytes.fromhex(line)
                print(hashlib.sha256(m).hexdigest(), hmac.new(key, m, hashlib.sha256).hexdigest())
            """
        let messages = ScratchSpace.path("entitle-crypto-", ending: ".txt")
        try lines.joined(separator: "\n").write(toFile: messages, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: messages) }
        let python = try ChildProcess.run("/usr/bin/env", ["python3", "-c", script, Hex.encode(key), messages])
        try #require(python.termination == .exited(0), "\(String(decoding: python.errors, as: UTF8.self))")
        let answer = String(decoding: python.output, as: UTF8.self)
        let theirs = answer.split(separator: "\n").map(String.init)
        expectEqual(theirs.count, ours.count)
        for (index, pair) in zip(ours, theirs).enumerated() where pair.0 != pair.1 {
            Issue.record("length \(index): ours \(pair.0), Python's \(pair.1)")
        }

        // Random text in the alphabet: refused exactly where it is not canonical, else Foundation's bytes.
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        for _ in 0..<2000 {
            let length = Int(random.bytes(1)[0]) % 40
            let text = String(decoding: random.bytes(length).map { alphabet[Int($0 & 63)] }, as: UTF8.self)
            let standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                + String(repeating: "=", count: (4 - length % 4) % 4)
            let decoded = Base64URL.decode(text)
            expectEqual(Base64.decode(standard), decoded, "\(standard): the padded alphabet reads as the URL one")
            if let decoded {
                expectEqual(Data(base64Encoded: standard).map(Array.init), decoded, "\(text)")
                expectEqual(Base64URL.encode(decoded), text, "\(text) is canonical")
            } else if length % 4 != 1 {
                // Refused only for unused low bits that are not zero: its canonical re-encoding differs.
                let lenient = Data(base64Encoded: standard).map(Array.init)
                #expect(lenient.map { Base64URL.encode($0) != text } ?? true, "\(text) refused")
            }
        }
    }

    @Test func base64URLUsesTheURLSafeAlphabet() {
        expectEqual(Base64URL.encode([0xfb, 0xff, 0xbf]), "-_-_")
    }

    @Test func constantTimeEquality() {
        #expect(ConstantTime.equals("abc", "abc"))
        #expect(!ConstantTime.equals("abc", "abd"))
        #expect(!ConstantTime.equals("abc", "abcd"))
        #expect(!ConstantTime.equals("", "a"))
        #expect(ConstantTime.equals("", ""))
    }

    @Test func seededSourcesRepeatAndDiffer() {
        expectEqual(SeededRandomSource(seed: 3).bytes(32), SeededRandomSource(seed: 3).bytes(32))
        #expect(SeededRandomSource(seed: 3).bytes(32) != SeededRandomSource(seed: 4).bytes(32))
        #expect(SystemRandomSource().bytes(32) != SystemRandomSource().bytes(32))
    }
}
