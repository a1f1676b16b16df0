import EntitlementV2
import EntitlementTestSupport
import Testing

/// Adobe's *Throttling mechanism*, worked through: a burst of 10, then one request per second.
@Suite("REST API V2 throttling")
struct V2ThrottleBucketTests {
    let start = Timestamp(milliseconds: 1_000_000)

    /// Takes at each offset (milliseconds after `start`) and says which got through.
    func takes(_ bucket: inout V2ThrottleBucket, at offsets: [Int64]) -> [Bool] {
        offsets.map { bucket.take(at: start.adding(.milliseconds($0))) }
    }

    @Test func aBurstOfTenThenOnePerSecond() {
        var bucket = V2ThrottleBucket()
        expectEqual(takes(&bucket, at: Array(repeating: 0, count: 10)), Array(repeating: true, count: 10))
        expectEqual(takes(&bucket, at: [0, 999, 1000, 1500, 2000]), [false, false, true, false, true])
    }

    @Test func theDocumentedExample() {
        // Calls 0.2 s apart: the burst and the tokens earned meanwhile carry 12 calls (to t = 2.2 s);
        // the calls at 2.4–2.8 s are throttled; at 3.0 s a whole token is back.
        var bucket = V2ThrottleBucket()
        let outcomes = takes(&bucket, at: (0..<16).map { Int64($0) * 200 })
        expectEqual(outcomes, Array(repeating: true, count: 12) + [false, false, false, true], "\(outcomes)")
    }

    @Test func aPacerKnowsHowLongToWait() {
        var bucket = V2ThrottleBucket()
        _ = takes(&bucket, at: Array(repeating: 0, count: 10))
        let now = bucket.wait(at: start)
        let later = bucket.wait(at: start.adding(.milliseconds(400)))
        let muchLater = bucket.wait(at: start.adding(.seconds(5)))
        #expect(now == .seconds(1) && later == .milliseconds(600) && muchLater == .zero)
        // The bucket never holds more than its burst, however long the pause.
        expectEqual(takes(&bucket, at: Array(repeating: 3_600_000, count: 11)), Array(repeating: true, count: 10) + [false])
    }

    @Test func timeGoingBackwardsNeverAddsTokensAndTheEndOfTimeDoesNotTrap() {
        var bucket = V2ThrottleBucket(burst: 1)
        expectEqual(takes(&bucket, at: [0, -1_000_000, 500, 1000]), [true, false, false, true])
        let atTheEnd = bucket.take(at: Timestamp(milliseconds: .max))
        let again = bucket.take(at: Timestamp(milliseconds: .max))
        #expect(atTheEnd && !again)
    }
}
