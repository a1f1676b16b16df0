import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import Synchronization
import EntitlementTestSupport
import Testing

/// The host's periodic summary: one `info` line per interval of its clock, counting what happened
/// since the last one, until stopped.
extension SessionHostTests {
    @Test func aSummaryLineEveryIntervalCountsWhatHappenedSinceTheLastUntilStopped() async throws {
        let rig = Rig()
        let host = rig.host()
        let lines = CollectedLines()
        let summaries = host.logSummaries(every: .seconds(60), to: lines)
        for device in 1...3 {
            _ = try await host.answer(to: .checkAuthentication, on: SessionKey(deviceID: "summary-\(device)", requestorID: Self.requestor))
        }
        await rig.clock.advance(by: .seconds(59))
        #expect(lines.all.isEmpty, "nothing before the interval")
        await rig.clock.advance(by: .seconds(1))
        await rig.clock.advance(by: .seconds(60))
        let logged = lines.all
        try #require(logged.count == 2, "\(logged)")
        #expect(logged.allSatisfy { $0.level == .info })
        expectEqual(logged[0].message, "sessions: 3 resident, 0 resting; since the last summary: 3 created, 0 put to rest, 0 resumed, 0 closed, 0 forgotten, 0 calls refused")
        #expect(logged[1].message.contains("since the last summary: 0 created"), "counts are since the last line: \(logged[1].message)")
        expectEqual(logged[1].metadata["created"], "3", "metadata carries the totals")
        summaries.cancel()
        await rig.clock.advance(by: .seconds(600))
        expectEqual(lines.all.count, 2, "no line after the timer is cancelled")
    }

    @Test func summariesEndWhenTheHostShutsDown() async throws {
        let rig = Rig()
        let host = rig.host()
        let lines = CollectedLines()
        host.logSummaries(every: .seconds(1), to: lines)
        await rig.clock.advance(by: .seconds(1))
        expectEqual(lines.all.count, 1)
        _ = await host.shutdown(gracePeriod: .seconds(1))
        await rig.clock.advance(by: .seconds(10))
        expectEqual(lines.all.count, 1, "\(lines.all)")
    }
}

/// Log lines, collected.
final class CollectedLines: EngineLogHandler {
    struct Line: Sendable {
        let level: LogLevel
        let message: String
        let metadata: [String: String]
    }

    private let lines = Mutex<[Line]>([])
    var all: [Line] { lines.withLock { $0 } }

    func log(level: LogLevel, message: String, metadata: [String: String]) {
        lines.withLock { $0.append(Line(level: level, message: message, metadata: metadata)) }
    }
}
