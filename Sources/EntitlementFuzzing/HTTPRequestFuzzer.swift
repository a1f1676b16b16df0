import EntitlementEngine
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSimulatorServer

/// Fuzzes the HTTP/1.1 request parser and what `entitle serve` does with what it parses: mutated
/// requests (REST API V2 calls, registration, the MVPDs' pages) arrive in random pieces. The
/// oracle: the parser never traps; it reads the same requests (or the same refusal) however the
/// bytes are split; every request it hands over has a body as long as its `Content-Length` and no
/// control character in a header; and the simulator's app answers every one with a status.
package enum HTTPRequestFuzzer {
    /// The `http-request` target.
    package static let target = FuzzTarget(
        name: "http-request",
        summary: "mutated HTTP requests in random pieces: the same reading however split, sane requests, every one answered",
        input: { text(seed: $0) }, run: { await check(seed: $0) })

    static let corpus: [String] = [
        "GET /api/v2/sim-requestor/configuration HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nAuthorization: Bearer access.x\r\nAccept: application/json\r\n\r\n",
        "POST /api/v2/sim-requestor/sessions HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer a\r\nAP-Device-Identifier: fingerprint ZGV2aWNlLTE=\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 71\r\n\r\nmvpd=acme-cable&domainName=sim-app.example&redirectUrl=adobepass%3A%2F%2F",
        "POST /api/v2/sim-requestor/decisions/authorize/acme-cable HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nX-Device-Info: eyJtb2RlbCI6IngiLCJvc05hbWUiOiJ5In0=\r\nContent-Length: 29\r\n\r\n{\"resources\":[\"sports-live\"]}",
        "POST /o/client/register HTTP/1.1\r\nHost: h\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{\"software_statement\":\"sim.software-statement.v2\"}",
        "POST /o/client/token HTTP/1.1\r\nHost: h\r\nContent-Length: 63\r\nExpect: 100-continue\r\n\r\nclient_id=a&client_secret=b&grant_type=client_credentials&x=%ZZ",
        "GET /api/v2/sim-requestor/profiles/code/ABCD2345 HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\nGET / HTTP/1.0\r\n\r\n",
        "POST /mvpd/acme-cable/login HTTP/1.1\r\nHost: h\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 52\r\n\r\nsession=page.x&username=alice&password=wonderland&a=",
        "GET /activate?code=ABCD2345 HTTP/1.1\r\nHost: h\r\n\r\n",
        "GET /api/v2/authenticate/sim-requestor/ABCD2345 HTTP/1.1\r\nHost: h\r\n\r\n",
        "POST /api/v2/sim-requestor/sessions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nmvpd=\r\nA\r\nacme-cable\r\n0\r\nX-Sum: 1\r\n\r\nGET / HTTP/1.1\r\nHost: h\r\n\r\n",
    ]

    static func text(seed: UInt64) -> String {
        var random = FuzzRandom(seed: seed)
        // Mutate line by line, keeping CRLFs as the lines' own ends so most cases stay near-valid.
        let base = random.pick(corpus).replacingOccurrences(of: "\r\n", with: "\r\u{1}\n")
        return TextMutator.mutate(base, &random).replacingOccurrences(of: "\r\u{1}\n", with: "\r\n").replacingOccurrences(
            of: "\u{1}", with: "")
    }

    /// What parsing a byte string produced: the requests, then a refusal or the wait for more.
    struct Reading: Equatable {
        var requests: [HTTPRequest] = []
        var continues = 0
        var refusal: HTTPParseError?
    }

    static func read(_ bytes: [UInt8], splitAt cuts: [Int], limits: HTTPServerLimits) -> Reading {
        var parser = HTTPRequestParser(limits: limits)
        var reading = Reading()
        var start = 0
        for end in cuts + [bytes.count] where end >= start {
            parser.append(bytes[start..<end])
            start = end
            do {
                loop: while true {
                    switch try parser.next() {
                    case .request(let request): reading.requests.append(request)
                    case .continueExpected: reading.continues += 1
                    case .needMore: break loop
                    }
                }
            } catch {
                reading.refusal = error
                return reading
            }
        }
        return reading
    }

    static func check(seed: UInt64) async -> FuzzFailure? {
        let text = text(seed: seed)
        let bytes = Array(text.utf8)
        var random = FuzzRandom(seed: seed &+ 0x5EED)
        let cuts = (0..<Int.random(in: 0...6, using: &random)).map { _ in Int.random(in: 0...bytes.count, using: &random) }.sorted()
        let limits = HTTPServerLimits(requestLineBytes: 512, headerBytes: 1024, headerFields: 12, bodyBytes: 256)
        let whole = read(bytes, splitAt: [], limits: limits)
        let pieces = read(bytes, splitAt: cuts, limits: limits)
        func fail(_ problem: String) -> FuzzFailure { FuzzFailure(seed: seed, problem: problem, reproduction: text.debugDescription) }
        // Only the number of 100-continue answers may depend on the split (one per head that waited).
        guard whole.requests == pieces.requests, whole.refusal == pieces.refusal else {
            return fail("split at \(cuts) the parser read \(pieces.requests.count) requests and \(String(describing: pieces.refusal)), whole \(whole.requests.count) and \(String(describing: whole.refusal))")
        }
        let simulator = Simulator(clock: ManualClock(), seed: seed)
        let app = SimulatorHTTPApp(service: SimulatedV2Service(simulator: simulator, throttles: false), baseURL: "https://sp.sim")
        for request in whole.requests {
            if request.headers["Transfer-Encoding"] != nil {
                // A chunked body: no Content-Length beside it, and never more than the limit.
                guard request.headers["Content-Length"] == nil, request.body.count <= limits.bodyBytes else {
                    return fail("a chunked body of \(request.body.count) bytes beside Content-Length \(request.headers["Content-Length"] ?? "-")")
                }
            } else {
                let declared = request.headers["Content-Length"].flatMap { Int($0.split(separator: ",")[0].trimmingCharacters(in: .whitespaces)) } ?? 0
                guard request.body.count == declared else { return fail("a body of \(request.body.count) bytes for Content-Length \(declared)") }
            }
            for field in request.headers where field.value.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\u{0}" }) {
                return fail("a control character in header \(field.name)")
            }
            let answer = await app.respond(request)
            guard (100...599).contains(answer.status) else { return fail("status \(answer.status)") }
        }
        return nil
    }
}
