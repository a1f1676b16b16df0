import EntitlementSimulator
import Testing

/// A suite trait that holds every test to the exactly-once rule: each `SimulatedSession` a test
/// creates is checked after the test body (once idle) unless the test already checked it with
/// `expectClean(pending:)`. Unanswered calls, double answers and callbacks nobody looked at fail.
struct ChecksExactlyOnce: SuiteTrait, TestTrait, TestScoping {
    var isRecursive: Bool { true }

    func provideScope(
        for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void
    ) async throws {
        guard !test.isSuite else { return try await function() }
        let collector = SessionCollector()
        try await SessionCollector.$current.withValue(collector) { try await function() }
        for session in collector.collected where !session.ledger.wasChecked {
            await session.enabler.whenIdle()
            let problems = session.ledger.violations()
            if !problems.isEmpty {
                Issue.record(Comment(rawValue: "exactly-once rule broken (and the test never checked):\n" + problems.joined(separator: "\n")))
            }
        }
    }
}

extension Trait where Self == ChecksExactlyOnce {
    /// Checks every session of every test in the suite against the exactly-once rule.
    static var checksExactlyOnce: Self { Self() }
}
