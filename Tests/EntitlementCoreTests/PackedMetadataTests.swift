import EntitlementFuzzing
import EntitlementTestSupport
import Foundation
import Testing

@testable import EntitlementCore
@testable import EntitlementEngine

/// An authentication's attributes packed in one byte array: the same dictionary back, the same
/// answers, the same equality and the same JSON as the dictionary they replace.
@Suite("Packed metadata")
struct PackedMetadataTests {
    /// Random attributes — empty, unicode, texts long enough for two- and three-byte lengths, lists of
    /// every size — pack and unpack to the dictionary they came from, and each value reads alone.
    @Test(.backgroundThread) func randomAttributesUnpackToTheDictionaryTheyCameFrom() {
        var random = FuzzRandom(seed: 7)
        let alphabet = Array("az09-_ é漢🎬\u{301}")
        func text(_ random: inout FuzzRandom) -> String {
            let length = [0, 1, 5, 15, 16, 127, 128, 300, 16_384][Int.random(in: 0..<9, using: &random)]
            return String((0..<length).map { _ in alphabet.randomElement(using: &random)! })
        }
        for _ in 0..<300 {
            var metadata: [String: MetadataValue] = [:]
            for _ in 0..<Int.random(in: 0..<6, using: &random) {
                metadata[text(&random)] =
                    Bool.random(using: &random)
                    ? .text(text(&random)) : .list((0..<Int.random(in: 0..<4, using: &random)).map { _ in text(&random) })
            }
            let packed = PackedMetadata(metadata)
            expectEqual(packed.dictionary, metadata)
            expectEqual(packed.isEmpty, metadata.isEmpty)
            for (key, value) in metadata { #expect(packed[key] == value) }
            #expect(packed["not-an-attribute-\(metadata.count)"] == nil)
        }
    }

    /// Equal dictionaries are equal packed, with equal hashes, also when a key is spelt with other
    /// scalars that Swift counts as the same string (a composed and a decomposed "é").
    @Test func equalityAndHashingAreTheDictionarys() {
        let composed = PackedMetadata(["caf\u{E9}": .text("x"), "zip": .list(["10001"])])
        let decomposed = PackedMetadata(["cafe\u{301}": .text("x"), "zip": .list(["10001"])])
        expectEqual(composed, decomposed)
        expectEqual(composed.hashValue, decomposed.hashValue)
        #expect(composed != PackedMetadata(["café": .text("y"), "zip": .list(["10001"])]))
        #expect(PackedMetadata(["zip": .text("10001")]) != PackedMetadata(["zip": .list(["10001"])]))
    }

    /// A token encodes its attributes as the JSON object it always did, and reads them back.
    @Test func aTokenEncodesItsAttributesAsAnObject() throws {
        let token = AuthenticationToken(
            mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "user-1", expires: Timestamp(milliseconds: 5),
            metadata: ["zip": .list(["10001", "10002"]), "householdID": .text("hh-alice")])
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        let json = try #require(String(data: try encoder.encode(token), encoding: .utf8))
        #expect(json.contains(#""metadata":{"householdID":{"text":{"_0":"hh-alice"}},"zip":{"list":{"_0":["10001","10002"]}}}"#))
        try expectEqual(JSONDecoder().decode(AuthenticationToken.self, from: Data(json.utf8)), token)
        expectEqual(token.packedMetadata["zip"], .list(["10001", "10002"]))
    }
}
