import EntitlementCore
import Foundation
import EntitlementTestSupport
import Testing

/// A step-up kept in the store: every phase reads back as written, and what this version cannot read
/// is dropped without losing the rest of the device's tokens.
@Suite("Stored step-ups")
struct PendingStepUpTests {
    static let advice = StepUpAdvice(kind: .transaction, value: "TransactionConditionAdvice", transactionID: "tx-1")

    static func record(_ phase: PendingStepUp.Phase, data: [String: String] = [:]) -> PendingStepUp {
        PendingStepUp(
            resource: "horror-1", data: data, provider: "kids", advice: advice, phase: phase, expires: Timestamp(milliseconds: 60_000))
    }

    @Test(arguments: [
        PendingStepUpTests.record(.awaiting, data: ["rating": "R"]),
        PendingStepUpTests.record(.completing),
        PendingStepUpTests.record(.answered(.token("media-token"))),
        PendingStepUpTests.record(.answered(.failed(code: "STEP_UP_FAILED", description: "The step-up was not completed."))),
    ])
    func everyPhaseReadsBackAsWritten(record: PendingStepUp) throws {
        let tokens = StoredTokens(selectedProvider: "acme", pendingStepUps: [record])
        let reread = try JSONDecoder().decode(StoredTokens.self, from: JSONEncoder().encode(tokens))
        expectEqual(reread, tokens)
        #expect(!reread.holdsNothing, "a step-up alone is something to keep")
    }

    @Test func tokensWithoutStepUpsAreWrittenAsBefore() throws {
        let json = String(decoding: try JSONEncoder().encode(StoredTokens(selectedProvider: "acme")), as: UTF8.self)
        #expect(!json.contains("pendingStepUps"))
    }

    @Test func aStepUpOfAPhaseThisVersionDoesNotKnowIsDroppedAndTheRestKept() throws {
        let json = #"""
            {"selectedProvider":"acme","pendingStepUps":[{"resource":"r","provider":"p","adviceKind":"transaction",
            "adviceValue":"v","expires":{"milliseconds":5},"phase":"delegated"}]}
            """#
        let tokens = try JSONDecoder().decode(StoredTokens.self, from: Data(json.utf8))
        expectEqual(tokens.selectedProvider, "acme")
        #expect(tokens.pendingStepUps.isEmpty)
    }
}
