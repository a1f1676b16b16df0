import EntitlementEngine
import EntitlementSupport

/// Fuzzes `handleExternalURL`'s parser with byte-level mutations of a valid redirect and judges it
/// against a reference written separately, on bytes and Unicode scalars; and checks that the
/// redactor never shows the code or the state of a URL that carries them.
package enum URLFuzzer {
    /// The `url` target.
    package static let target = FuzzTarget(
        name: "url",
        summary: "mutated redirect URLs: ExternalURL.parse agrees with a byte-level reference; redaction hides code and state",
        input: { url(seed: $0).text }, run: { check(seed: $0) })

    /// A URL case: the text and every secret value it was built with.

    /// What the reference decides.
    enum Decision: Equatable {
        case accepted(base: String, parameters: [String: String])
        case malformed
        case duplicate
    }

    // MARK: - Cases

    /// The case for `seed`: the URL and the code and state it started with.
    static func url(seed: UInt64) -> (text: String, secrets: [String]) {
        var random = FuzzRandom(seed: seed)
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
        let code = "code." + String((0..<16).map { _ in random.pick(alphabet) })
        let state = String((0..<22).map { _ in random.pick(alphabet) })
        var scalars = Array("adobepass://ios.app?code=\(code)&state=\(state)&mvpd=acme-cable".unicodeScalars)
        var secrets = [code, state]
        for _ in 0..<Int.random(in: 1...4, using: &random) { mutate(&scalars, &secrets, &random) }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return (String(text), secrets)
    }

    static let interesting: [Unicode.Scalar] = [
        "?", "&", "=", "#", "%", " ", "\t", "\n", "\u{0}", "\u{7F}", "\u{85}", "\u{A0}", "\u{301}", "\u{200B}", "\u{2028}",
        "\u{2029}", "\u{202E}", "\u{2066}", "\u{FEFF}", "é", "😀", "+", "/", ":", ";", "<", ">",
    ]

    static func mutate(_ scalars: inout [Unicode.Scalar], _ secrets: inout [String], _ random: inout FuzzRandom) {
        let position = Int.random(in: 0...scalars.count, using: &random)
        let at = min(position, max(0, scalars.count - 1))
        switch Int.random(in: 0..<11, using: &random) {
        case 0 where !scalars.isEmpty:  // percent-encode one character (a delimiter, a letter of a name)
            scalars.replaceSubrange(at...at, with: PercentEncoding.encode(String(scalars[at])).unicodeScalars)
        case 1 where !scalars.isEmpty:  // encode it twice
            let once = PercentEncoding.encode(String(scalars[at]))
            scalars.replaceSubrange(at...at, with: PercentEncoding.encode(once).unicodeScalars)
        case 2: scalars.insert(random.pick(interesting), at: position)
        case 3: scalars.insert(contentsOf: "%".unicodeScalars + random.pick(["0A", "E2%80%A8", "C2%85", "zz", "2", "FF", "3F", "26", "23", "3D", "61"]).unicodeScalars, at: position)
        case 4 where !scalars.isEmpty: scalars.remove(at: at)
        case 5: scalars.insert(contentsOf: random.pick(["&state=x", "&st%61te=y", "&code=z", "&CODE=z", "&=v", "&&", "&x", "#f"]).unicodeScalars, at: position)
        case 6 where !scalars.isEmpty:  // change a letter's case
            let value = scalars[at].value
            if (0x61...0x7A).contains(value) || (0x41...0x5A).contains(value) { scalars[at] = Unicode.Scalar(value ^ 0x20)! }
        case 7:  // a URL nested in a parameter, with secrets of its own
            let nestedCode = "n3st3d" + String(random.next() % 1_000_000_007)
            let nestedState = "n3st4t3" + String(random.next() % 1_000_000_007)
            secrets += [nestedCode, nestedState]
            scalars.append(contentsOf: ("&continue=" + PercentEncoding.encode("https://x.sim/cb?code=\(nestedCode)&state=\(nestedState)")).unicodeScalars)
        case 8 where random.chance(1, in: 20): scalars.append(contentsOf: String(repeating: "a", count: Int.random(in: 8_000...9_000, using: &random)).unicodeScalars)
        case 9 where scalars.count > 1:
            let other = Int.random(in: 0..<scalars.count, using: &random)
            scalars.swapAt(at, other)
        default: scalars.insert(random.pick(interesting), at: position)
        }
    }

    // MARK: - Oracle

    static func check(seed: UInt64) -> FuzzFailure? {
        let (text, secrets) = url(seed: seed)
        let expected = reference(Array(text.utf8))
        let actual: Decision
        do throws(RedirectRefusal) {
            let parsed = try ExternalURL.parse(text)
            actual = .accepted(base: parsed.base, parameters: parsed.parameters)
        } catch {
            actual = error.code == RedirectRefusal.duplicateParameter("").code ? .duplicate : .malformed
        }
        func failure(_ problem: String) -> FuzzFailure {
            FuzzFailure(seed: seed, problem: problem, reproduction: String(reflecting: text))
        }
        guard actual == expected else { return failure("the parser says \(actual), the reference \(expected)") }
        let redacted = Redactor.redact(text)
        // A secret may show only where a mutation made its name another name (`st?ate`, `stéate`).
        for secret in secrets where redacted.contains(secret) && secretNamed(secret, in: text) {
            return failure("the redacted URL shows a secret: \(redacted)")
        }
        return nil
    }

    /// Whether `secret` follows a secret parameter's name and `=`, once the text is decoded (sixteen
    /// rounds, as many as the redactor looks through), stripped of invisible and control characters, and lower-cased.
    static func secretNamed(_ secret: String, in text: String) -> Bool {
        var decoded = text
        for _ in 0..<16 { decoded = leniently(decoded) }
        var visible = String.UnicodeScalarView()
        visible.append(contentsOf: decoded.unicodeScalars.filter { !isInvisible($0.value) || $0.value == 0x20 })
        let lower = String(visible).lowercased()
        return Redactor.secretParameters.contains { name in lower.contains(name + "=" + secret.lowercased()) }
    }

    static func isInvisible(_ value: UInt32) -> Bool {
        value <= 0x20 || (0x7F...0xA0).contains(value) || (0x200B...0x200F).contains(value) || (0x2028...0x202E).contains(value)
            || (0x2060...0x206F).contains(value) || value == 0xFEFF
    }

    static func leniently(_ text: String) -> String {
        var out: [UInt8] = []
        var bytes = Array(text.utf8)[...]
        while let byte = bytes.popFirst() {
            if byte == UInt8(ascii: "%"), bytes.count >= 2, let value = UInt8(String(decoding: bytes.prefix(2), as: UTF8.self), radix: 16) {
                out.append(value)
                bytes = bytes.dropFirst(2)
            } else {
                out.append(byte)
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The reference: what an external URL must be, decided on its bytes.
    static func reference(_ bytes: [UInt8]) -> Decision {
        guard !bytes.isEmpty, bytes.count <= 8192 else { return .malformed }
        for byte in bytes where byte <= 0x20 || byte >= 0x7F || byte == UInt8(ascii: "#") { return .malformed }
        let question = bytes.firstIndex(of: UInt8(ascii: "?")) ?? bytes.count
        let base = Array(bytes[0..<question])
        guard let scheme = (0..<max(0, base.count - 2)).first(where: { base[$0] == 0x3A && base[$0 + 1] == 0x2F && base[$0 + 2] == 0x2F }),
            scheme > 0
        else { return .malformed }
        var parameters: [String: String] = [:]
        if question < bytes.count - 1 {
            var piece: [UInt8] = []
            for byte in bytes[(question + 1)...] + [UInt8(ascii: "&")] {
                guard byte == UInt8(ascii: "&") else {
                    piece.append(byte)
                    continue
                }
                guard !piece.isEmpty else { return .malformed }
                let split = piece.firstIndex(of: UInt8(ascii: "=")) ?? piece.count
                guard let name = decoded(Array(piece[0..<split])),
                    let value = decoded(split < piece.count ? Array(piece[(split + 1)...]) : [])
                else { return .malformed }
                guard !name.isEmpty else { return .malformed }
                guard parameters[name] == nil else { return .duplicate }
                parameters[name] = value
                piece = []
            }
        }
        return .accepted(base: String(decoding: base, as: UTF8.self), parameters: parameters)
    }

    /// Strict `%XX` decoding to valid UTF-8 with no control or invisible scalar (a space is allowed).
    static func decoded(_ bytes: [UInt8]) -> String? {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16),
                    bytes[(index + 1)...(index + 2)].allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || ($0 | 0x20 >= 0x61 && $0 | 0x20 <= 0x66) })
                else { return nil }
                out.append(value)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        guard let text = String(validating: out, as: UTF8.self) else { return nil }
        for scalar in text.unicodeScalars where scalar.value != 0x20 && isInvisible(scalar.value) { return nil }
        return text
    }
}
