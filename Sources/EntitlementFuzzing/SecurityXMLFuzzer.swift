import EntitlementProviders
import EntitlementSupport

/// Fuzzes the Security API's XML reader with mutated answers. The oracle: it never traps; it reads a
/// document or refuses it with a reason; and every element it reads, written back, reads as the same
/// element.
package enum SecurityXMLFuzzer {
    /// The `security-xml` target.
    package static let target = FuzzTarget(
        name: "security-xml", summary: "mutated Security API answers: read or refused, never a trap; what is read round-trips",
        input: { String(decoding: bytes(seed: $0), as: UTF8.self) }, run: { check(seed: $0) })

    static let corpus: [String] = [
        "<token>abc123</token>", #"<?xml version="1.0" encoding="UTF-8"?><error status="notrecognised" message="Credentials not recognised"/>"#,
        #"<subscription state="active" message="Gold &amp; more"><issue id="issue-1"/><issue id='issue-2'></issue></subscription>"#,
        "<credentials><userid>ann</userid><password>p&lt;w&#x263A;</password></credentials>",
        "<!-- note --><ok/>", #"<error status="invalidtoken" message="The token is not valid."/>"#,
    ]

    static func bytes(seed: UInt64) -> [UInt8] {
        var random = FuzzRandom(seed: seed)
        return Array(TextMutator.mutate(random.pick(corpus), &random).utf8)
    }

    static func check(seed: UInt64) -> FuzzFailure? {
        let input = bytes(seed: seed)
        let shown = String(decoding: input, as: UTF8.self)
        guard let element = try? SecurityAPIXML.parse(input) else { return nil }
        let written = write(element)
        guard let again = try? SecurityAPIXML.parse(Array(written.utf8)) else {
            return FuzzFailure(seed: seed, problem: "what it read does not read back: \(written)", reproduction: shown)
        }
        guard again == element else {
            return FuzzFailure(seed: seed, problem: "what it read reads back differently: \(written)", reproduction: shown)
        }
        return nil
    }

    /// The element as XML, text and attributes escaped.
    static func write(_ element: SecurityAPIXML.Element) -> String {
        let attributes = element.attributes.sorted { $0.key < $1.key }.map { " \($0.key)=\"\($0.value.markupEscaped)\"" }.joined()
        let inner = element.text.markupEscaped + element.children.map(write).joined()
        return "<\(element.name)\(attributes)>\(inner)</\(element.name)>"
    }

}
