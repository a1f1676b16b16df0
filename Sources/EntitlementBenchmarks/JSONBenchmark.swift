import EntitlementEngine
import EntitlementScenarios
import EntitlementTracing
import Foundation

/// `entitle bench json`: the canonical trace writer against `JSONEncoder` (sorted keys, no slash
/// escaping) on the same records, interleaved in one run; reports medians and the ratio.
package struct JSONBenchmark {
    /// A session worth of records: login, authorizations, pre-authorization, logout.
    static let script = """
        ignore sendTrackingData
        > setRequestor sim-requestor
        < setRequestorComplete success
        > getAuthorization sports-live
        < displayProviderDialog *
        > setSelectedProvider acme-cable
        < navigateToUrl *
        ! user logs in as alice with wonderland
        < setAuthenticationStatus 1 ""
        < setToken * sports-live
        > checkPreauthorizedResources [news-channel, sports-live, movies-hd]
        < preauthorizedResources *
        > getAuthorization news-channel
        < setToken * news-channel
        > getMetadata user/zip
        < setMetadataStatus user/zip * false
        > logout
        < navigateToUrl *
        ! web view follows the logout
        < setAuthenticationStatus 0 USER_NOT_AUTHENTICATED_ERROR
        """

    /// A run of the trace JSON figures.
    package init() {}

    /// Measures `rounds` rounds and prints the figures; the exit status (0 when every round completed).
    package func run(rounds: Int) async -> Int32 {
        let recorder = TraceRecorder(recordedWith: "entitle bench")
        let result = await ScenarioRunner().run(try! ScenarioParser.parse(Self.script, file: "bench"), recorder: recorder)
        guard result.passed else {
            print("bench: the benchmark session failed: \(result.failure?.description ?? "")")
            return 1
        }
        let session = [recorder.trace.header] + recorder.trace.records
        let records = Array(repeating: session, count: max(1, 10_000 / session.count)).flatMap { $0 }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]

        // Same bytes, or the comparison means nothing.
        for record in session {
            guard let foundation = try? encoder.encode(record), Array(foundation) == record.canonicalBytes else {
                print("bench: JSONEncoder and the canonical writer disagree on \(record.canonicalText)")
                return 1
            }
        }
        var writer: [Double] = [], foundation: [Double] = []
        var bytes = 0
        for _ in 0..<rounds {
            let start = ContinuousClock.now
            var total = 0
            for record in records { total += record.canonicalBytes.count }
            writer.append(Self.seconds(ContinuousClock.now - start))
            bytes = total
            let second = ContinuousClock.now
            for record in records { total += (try? encoder.encode(record).count) ?? 0 }
            foundation.append(Self.seconds(ContinuousClock.now - second))
        }
        let writerMedian = Self.median(writer), foundationMedian = Self.median(foundation)
        let perRecord = { (seconds: Double) in seconds / Double(records.count) * 1_000_000 }
        let megabytes = { (seconds: Double) in Double(bytes) / seconds / 1_000_000 }
        print("records: \(records.count) (a \(session.count)-record session repeated), \(bytes / records.count) bytes each on average, \(rounds) rounds, medians")
        print(String(format: "canonical writer : %7.2f µs/record  %7.1f MB/s", perRecord(writerMedian), megabytes(writerMedian)))
        print(String(format: "JSONEncoder      : %7.2f µs/record  %7.1f MB/s", perRecord(foundationMedian), megabytes(foundationMedian)))
        let ratio = foundationMedian / writerMedian
        print(
            ratio >= 1
                ? String(format: "ratio            : the canonical writer is %.1f× faster (identical bytes)", ratio)
                : String(format: "ratio            : the canonical writer is %.1f× slower (identical bytes)", 1 / ratio))
        return 0
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
