import EntitlementTestSupport
import Testing

@testable import EntitlementHTTPServer

@Suite("HTTP/1.1 request parser")
struct HTTPRequestParserTests {
    private func parse(_ text: String, limits: HTTPServerLimits = HTTPServerLimits()) throws(HTTPParseError) -> [HTTPParserOutcome] {
        var parser = HTTPRequestParser(limits: limits)
        parser.append(Array(text.utf8))
        var steps: [HTTPParserOutcome] = []
        while true {
            switch try parser.next() {
            case .request(let request): steps.append(.request(request))
            case .continueExpected: steps.append(.continueExpected)
            case .needMore: return steps
            }
        }
    }

    @Test func aGetWithHeadersAndAQuery() throws {
        let steps = try parse("GET /api/v2/sp/configuration?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept:  application/json \r\n\r\n")
        guard case .request(let request) = steps.first, steps.count == 1 else {
            Issue.record("expected one request, got \(steps)")
            return
        }
        expectEqual(request.method, "GET")
        expectEqual(request.path, "/api/v2/sp/configuration")
        expectEqual(request.query, "x=1")
        expectEqual(request.headers["accept"], "application/json", "names match without case, OWS trimmed")
        #expect(request.keepsAlive)
        #expect(request.body.isEmpty)
    }

    @Test func aPostBodyArrivingByteByByteThenAPipelinedRequest() throws {
        let text = "POST /o/client/token HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\nhello=worldGET / HTTP/1.0\r\n\r\n"
        var parser = HTTPRequestParser()
        var requests: [HTTPRequest] = []
        for byte in Array(text.utf8) {
            parser.append([byte])
            while case .request(let request) = try parser.next() { requests.append(request) }
        }
        expectEqual(requests.map(\.target), ["/o/client/token", "/"])
        expectEqual(requests.first?.body, Array("hello=world".utf8))
        expectEqual(requests.last?.keepsAlive, false, "HTTP/1.0 closes unless keep-alive is asked for")
        #expect(!parser.hasPartialRequest)
    }

    /// A chunked body (RFC 9112 §7.1) is decoded — extensions ignored, trailer fields read and dropped —
    /// the same however its bytes arrive, and the next pipelined request follows it.
    @Test func aChunkedBodyIsDecodedHoweverItArrives() throws {
        let text = "POST /api/v2/sp/sessions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n"
            + "5;name=value\r\nmvpd=\r\nA\r\nacme-cable\r\n0\r\nX-Trailer: t\r\n\r\nGET /next HTTP/1.1\r\nHost: h\r\n\r\n"
        let bytes = Array(text.utf8)
        for piece in [1, 2, 3, 7, bytes.count] {
            var parser = HTTPRequestParser()
            var requests: [HTTPRequest] = []
            var start = 0
            while start < bytes.count {
                parser.append(bytes[start..<min(bytes.count, start + piece)])
                start += piece
                while case .request(let request) = try parser.next() { requests.append(request) }
            }
            expectEqual(requests.map(\.path), ["/api/v2/sp/sessions", "/next"], "pieces of \(piece)")
            expectEqual(requests.first.map { String(decoding: $0.body, as: UTF8.self) }, "mvpd=acme-cable", "pieces of \(piece)")
        }
    }

    /// A chunked body's raw bytes are dropped as its chunks are decoded, so a connection holds at most a
    /// head, one chunk and the body decoded (the probe of 0.9.2: one-byte chunks with 1,000-byte
    /// extensions took `entitle serve` to 1.6–4.0 GB from four connections); and framing larger than a
    /// body may be is refused (413) — extensions do not let a client send a thousand times the body's bytes.
    @Test func aChunkedBodyHoldsOneChunkAtATimeAndItsFramingIsBounded() throws {
        let limits = HTTPServerLimits(bodyBytes: 64 * 1024)
        let head = Array("POST /api/v2/sp/sessions HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        let chunk = Array(("1;" + String(repeating: "x", count: 1_000) + "\r\na\r\n").utf8)
        var parser = HTTPRequestParser(limits: limits)
        parser.append(head)
        var sent = head.count
        var largest = 0
        var refused: HTTPParseError?
        sending: while sent < 10 * 1024 * 1024 {
            parser.append(chunk)
            sent += chunk.count
            do throws(HTTPParseError) {
                guard case .needMore = try parser.next() else {
                    Issue.record("a body that never ended was handed out")
                    return
                }
            } catch {
                refused = error
                break sending
            }
            largest = max(largest, parser.bufferedBytes)
        }
        expectEqual(refused, .chunkFramingTooLarge, "after \(sent) bytes: \(String(describing: refused))")
        #expect(sent <= limits.bodyBytes + head.count + 2 * chunk.count, "refused once the framing passed the body limit: \(sent) bytes")
        #expect(largest <= head.count + chunk.count, "the parser kept \(largest) bytes: one chunk at most beside the head")

        // A body of many small chunks within the limits is decoded whole, holding one chunk at a time.
        var small = HTTPRequestParser(limits: limits)
        small.append(head)
        let piece = Array("10\r\n0123456789abcdef\r\n".utf8)
        for _ in 0..<1_000 {
            small.append(piece)
            guard case .needMore = try small.next() else {
                Issue.record("the body ended early")
                return
            }
            #expect(small.bufferedBytes <= head.count + piece.count)
        }
        small.append(Array("0\r\n\r\n".utf8))
        guard case .request(let request) = try small.next() else {
            Issue.record("the body did not end")
            return
        }
        #expect(request.body.count == 16_000 && request.body.prefix(16) == Array("0123456789abcdef".utf8)[...])
        #expect(!small.hasPartialRequest)
    }

    @Test func expectContinueIsAnsweredOnceBeforeTheBody() throws {
        var parser = HTTPRequestParser()
        parser.append(Array("POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n".utf8))
        try expectEqual(parser.next(), .continueExpected)
        try expectEqual(parser.next(), .needMore)
        parser.append(Array("ok".utf8))
        guard case .request(let request) = try parser.next() else {
            Issue.record("no request")
            return
        }
        expectEqual(request.body, Array("ok".utf8))
    }

    @Test(arguments: [
        ("GET /\r\n\r\n", HTTPParseError.malformedRequestLine),
        ("GET  / HTTP/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("GET http://x/ HTTP/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("G@T / HTTP/1.1\r\nHost: h\r\n\r\n", .malformedRequestLine),
        ("GET / HTTP/2.0\r\nHost: h\r\n\r\n", .versionNotSupported),
        ("GET / HTTP/1.1\nHost: h\n\n", .malformedRequestLine),
        ("GET / HTTP/1.1\r\nHost: h\nX: y\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost : h\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\nHost: h\r\nX: a\u{01}b\r\n\r\n", .malformedHeader),
        ("GET / HTTP/1.1\r\n\r\n", .badHost),
        ("GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", .badHost),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1x\r\n\r\n", .badContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", .badContentLength),
        ("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n", .bodyTooLarge),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", .transferEncodingNotSupported),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n", .badTransferEncoding),
        ("POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", .badTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", .badTransferEncoding),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nz\r\n", .malformedChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX\r\n", .malformedChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3 x\r\nabc\r\n", .malformedChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n-1\r\n", .malformedChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\nabc\r\n", .malformedChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n123456789\r\n", .malformedChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nBad Trailer: x\r\n\r\n", .malformedChunkedBody),
        ("POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFF\r\n", .bodyTooLarge),
    ])
    func malformedRequestsAreRefusedWithTheirStatus(text: String, error: HTTPParseError) {
        #expect(throws: error) { try parse(text) }
    }

    @Test func limitsHaveTheirOwnStatuses() {
        let limits = HTTPServerLimits(requestLineBytes: 64, headerBytes: 256, headerFields: 3, bodyBytes: 10)
        #expect(throws: HTTPParseError.requestLineTooLong) { try parse("GET /" + String(repeating: "a", count: 100), limits: limits) }
        #expect(throws: HTTPParseError.headersTooLarge) {
            try parse("GET / HTTP/1.1\r\nHost: h\r\nX: " + String(repeating: "a", count: 300), limits: limits)
        }
        #expect(throws: HTTPParseError.headersTooLarge) {
            try parse("GET / HTTP/1.1\r\nHost: h\r\nA: 1\r\nB: 2\r\nC: 3\r\n\r\n", limits: limits)
        }
        #expect(throws: HTTPParseError.bodyTooLarge) { try parse("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 11\r\n\r\n", limits: limits) }
        expectEqual(HTTPParseError.headersTooLarge.status, 431)
        expectEqual(HTTPParseError.bodyTooLarge.status, 413)
        expectEqual(HTTPParseError.timedOut.status, 408)
        expectEqual(HTTPParseError.malformedRequestLine.status, 400)
    }

    @Test func leadingEmptyLinesAreIgnoredAndRepeatedEqualLengthsAccepted() throws {
        let steps = try parse("\r\n\r\nPOST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2, 2\r\n\r\nhi")
        guard case .request(let request) = steps.first else {
            Issue.record("no request: \(steps)")
            return
        }
        expectEqual(request.body, Array("hi".utf8))
    }
}

/// What the parser produced, for comparisons.
enum HTTPParserOutcome: Equatable {
    case request(HTTPRequest)
    case continueExpected
}
