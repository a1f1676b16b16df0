/// An incremental HTTP/1.1 request parser (RFC 9112): bytes in as they arrive, whole requests out,
/// one at a time, with pipelined bytes kept for the next. Strict where laxness lets requests be
/// smuggled or misread: CRLF line ends, no folded or space-before-colon fields, one
/// `Content-Length`, or `Transfer-Encoding: chunked` alone (RFC 9112 §7.1: the body decoded, trailer
/// fields read and dropped; never together with `Content-Length`, never in HTTP/1.0, no other
/// coding). Every refusal is a typed `HTTPParseError`.
package struct HTTPRequestParser: Sendable {
    /// What the parser has for the server.
    package enum Step: Sendable, Hashable {
        /// A whole request.
        case request(HTTPRequest)
        /// The head is in and asks `Expect: 100-continue`: answer `100 Continue`, then keep reading.
        case continueExpected
        /// More bytes are needed.
        case needMore
    }

    /// The limits applied.
    package let limits: HTTPServerLimits
    private var buffer: [UInt8] = []
    private var scanned = 0  // bytes already searched for the end of the head
    private var requestLineEnded = false  // a line end was seen in the head being searched
    private var head: Head?
    /// A chunked body's whole chunks decoded so far, and where the next chunk-size line starts: the
    /// decoding resumes there, so a body arriving in many pieces is read once, not from its start each time.
    private var chunked = ChunkedProgress()

    private struct ChunkedProgress {
        var next: Int?
        var body: [UInt8] = []
        /// The framing read so far: chunk-size lines with their extensions, and line ends.
        var framing = 0
    }
    private var continueAnswered = false

    private struct Head {
        var request: HTTPRequest
        var headLength: Int
        /// The body's length, or nil for a chunked body (decoded as it arrives).
        var bodyLength: Int?
        var expectsContinue: Bool
    }

    /// The bytes received and kept, not yet handed out: at most a head, one chunk being received (or a
    /// `Content-Length` body) and what a client pipelined behind them — a chunked body's chunks are
    /// dropped as they are decoded.
    package var bufferedBytes: Int { buffer.count }

    /// A parser with `limits`.
    package init(limits: HTTPServerLimits = HTTPServerLimits()) { self.limits = limits }

    /// Whether part of a request has arrived (an idle connection has none).
    package var hasPartialRequest: Bool { !buffer.isEmpty || head != nil }

    /// Adds received bytes.
    package mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// The next step: a request, a `100 Continue` to send, or a need for more bytes.
    package mutating func next() throws(HTTPParseError) -> Step {
        if head == nil {
            guard let parsed = try parseHead() else { return .needMore }
            head = parsed
            continueAnswered = false
        }
        guard let current = head else { return .needMore }
        let body: (bytes: [UInt8], end: Int)?
        if let length = current.bodyLength {
            let total = current.headLength + length
            body = buffer.count >= total ? (Array(buffer[current.headLength..<total]), total) : nil
        } else {
            body = try chunkedBody(from: chunked.next ?? current.headLength)
            if body == nil, let next = chunked.next, next > current.headLength {
                // The chunks decoded so far are in `chunked.body`: their raw bytes go.
                buffer.removeSubrange(current.headLength..<next)
                chunked.next = current.headLength
            }
        }
        guard let body else {
            if current.expectsContinue, !continueAnswered, buffer.count == current.headLength {
                continueAnswered = true
                return .continueExpected
            }
            return .needMore
        }
        var request = current.request
        request.body = body.bytes
        buffer.removeFirst(body.end)
        head = nil
        chunked = ChunkedProgress()
        scanned = 0
        requestLineEnded = false
        return .request(request)
    }

    // MARK: - The head

    private mutating func parseHead() throws(HTTPParseError) -> Head? {
        // Robustness (RFC 9112 §2.2): empty lines before a request line are ignored.
        var blank = 0
        while blank + 1 < buffer.count, buffer[blank] == cr, buffer[blank + 1] == lf { blank += 2 }
        if blank > 0 {
            buffer.removeFirst(blank)
            scanned = max(scanned - blank, 0)
        }
        guard let end = try headEnd() else { return nil }
        var lines = try splitLines(buffer[0..<end - 4])
        let requestLine = lines.removeFirst()
        guard requestLine.count <= limits.requestLineBytes else { throw .requestLineTooLong }
        var request = try Self.parseRequestLine(requestLine)
        guard lines.count <= limits.headerFields else { throw .headersTooLarge }
        for line in lines { try Self.parseField(line, into: &request.headers) }
        let hosts = request.headers.values("Host")
        if request.version == "HTTP/1.1", hosts.count != 1 { throw .badHost }
        let codings = request.headers.values("Transfer-Encoding").flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: " \t").lowercased() }
        let length: Int?
        if codings.isEmpty {
            length = try contentLength(request.headers)
            guard length! <= limits.bodyBytes else { throw .bodyTooLarge }
        } else {
            // Both framings, or a coding in HTTP/1.0, is how requests are smuggled: refused (RFC 9112 §6.1, §6.3).
            guard request.headers["Content-Length"] == nil, request.version == "HTTP/1.1", codings.last == "chunked" else {
                throw .badTransferEncoding
            }
            guard codings == ["chunked"] else { throw .transferEncodingNotSupported }
            length = nil
        }
        let expects = request.headers["Expect"]?.lowercased() == "100-continue" && length != 0
        return Head(request: request, headLength: end, bodyLength: length, expectsContinue: expects)
    }

    /// The index just past the head's CRLFCRLF. Bytes are examined in order, each once, and the
    /// first problem by position wins — a request line longer than its limit, a bare LF, a head
    /// longer than its limit — so the same bytes get the same answer however they arrive.
    private mutating func headEnd() throws(HTTPParseError) -> Int? {
        var index = scanned
        while index < buffer.count {
            if !requestLineEnded, index > limits.requestLineBytes + 1 { throw .requestLineTooLong }
            guard index < limits.headerBytes else { throw .headersTooLarge }
            if buffer[index] == lf {
                guard index > 0, buffer[index - 1] == cr else { throw requestLineEnded ? .malformedHeader : .malformedRequestLine }
                requestLineEnded = true
                if index >= 3, buffer[index - 2] == lf, buffer[index - 3] == cr { return index + 1 }
            }
            index += 1
        }
        scanned = index
        return nil
    }

    private func splitLines(_ bytes: ArraySlice<UInt8>) throws(HTTPParseError) -> [ArraySlice<UInt8>] {
        var lines: [ArraySlice<UInt8>] = []
        var start = bytes.startIndex
        var index = bytes.startIndex
        while index < bytes.endIndex {
            if bytes[index] == lf {
                // A bare LF (no CR before it) is refused: lines end in CRLF.
                guard index > start, bytes[index - 1] == cr else { throw lines.isEmpty ? .malformedRequestLine : .malformedHeader }
                lines.append(bytes[start..<index - 1])
                start = index + 1
            }
            index += 1
        }
        lines.append(bytes[start..<bytes.endIndex])
        return lines
    }

    private static func parseRequestLine(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> HTTPRequest {
        let parts = line.split(separator: space, omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, parts[0].allSatisfy(isTokenByte),
            let first = parts[1].first, first == slash || (parts[1].count == 1 && first == star),
            parts[1].allSatisfy({ $0 > 0x20 && $0 < 0x7F })
        else { throw .malformedRequestLine }
        let version = String(decoding: parts[2], as: UTF8.self)
        guard version.hasPrefix("HTTP/"), version.count == 8 else { throw .malformedRequestLine }
        guard version == "HTTP/1.1" || version == "HTTP/1.0" else {
            let digits = version.dropFirst(5)
            guard digits.first?.isNumber == true, digits.dropFirst().first == ".", digits.last?.isNumber == true else {
                throw .malformedRequestLine
            }
            throw .versionNotSupported
        }
        return HTTPRequest(
            method: String(decoding: parts[0], as: UTF8.self), target: String(decoding: parts[1], as: UTF8.self), version: version)
    }

    private static func parseField(_ line: ArraySlice<UInt8>, into headers: inout HTTPHeaders) throws(HTTPParseError) {
        guard let colon = line.firstIndex(of: colonByte) else { throw .malformedHeader }
        let name = line[line.startIndex..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else { throw .malformedHeader }
        var value = line[(colon + 1)...]
        while let first = value.first, first == space || first == tab { value = value.dropFirst() }
        while let last = value.last, last == space || last == tab { value = value.dropLast() }
        guard value.allSatisfy({ $0 == tab || ($0 >= 0x20 && $0 != 0x7F) }) else { throw .malformedHeader }
        headers.add(String(decoding: name, as: UTF8.self), String(decoding: value, as: UTF8.self))
    }

    // MARK: - A chunked body

    /// The longest chunk-size line (with its extensions) read.
    static let chunkLineBytes = 1024

    /// The rest of the chunked body from the chunk-size line at `start`, decoded, and the index just
    /// past the body (its trailer fields read and dropped); nil while bytes are missing. Each whole
    /// chunk is kept in ``chunked`` as it is read, so the next call resumes after it: the same bytes
    /// give the same answer however they arrive, and no byte is decoded twice.
    private mutating func chunkedBody(from start: Int) throws(HTTPParseError) -> (bytes: [UInt8], end: Int)? {
        var index = start
        while true {
            guard let lineEnd = try lineEnd(from: index, within: Self.chunkLineBytes) else { return nil }
            let size = try Self.chunkSize(buffer[index..<lineEnd])
            let data = lineEnd + 2
            if size == 0 { return try trailers(from: data).map { (chunked.body, $0) } }
            guard size <= limits.bodyBytes - chunked.body.count else { throw .bodyTooLarge }
            guard buffer.count >= data + size + 2 else { return nil }
            guard buffer[data + size] == cr, buffer[data + size + 1] == lf else { throw .malformedChunkedBody }
            chunked.framing += lineEnd - index + 4
            guard chunked.framing <= limits.bodyBytes else { throw .chunkFramingTooLarge }
            chunked.body += buffer[data..<data + size]
            index = data + size + 2
            chunked.next = index
        }
    }

    /// The index of the CR of the next CRLF at or after `index`; nil while it has not arrived; a line
    /// longer than `limit`, or a bare LF, is refused.
    private func lineEnd(from index: Int, within limit: Int) throws(HTTPParseError) -> Int? {
        var scan = index
        while scan < buffer.count {
            if buffer[scan] == lf {
                guard scan > index, buffer[scan - 1] == cr else { throw .malformedChunkedBody }
                return scan - 1
            }
            guard scan - index < limit else { throw .malformedChunkedBody }
            scan += 1
        }
        return nil
    }

    /// A chunk-size line: hexadecimal digits (at most 8: a chunk is never larger than a body may be),
    /// then nothing or extensions after `;`, which are ignored.
    private static func chunkSize(_ line: ArraySlice<UInt8>) throws(HTTPParseError) -> Int {
        let digits = line.prefix { isHexDigit($0) }
        let rest = line.dropFirst(digits.count)
        guard !digits.isEmpty, digits.count <= 8,
            rest.isEmpty || rest.drop(while: { $0 == space || $0 == tab }).first == UInt8(ascii: ";"),
            rest.allSatisfy({ $0 == tab || ($0 >= 0x20 && $0 != 0x7F) }),
            let size = Int(String(decoding: digits, as: UTF8.self), radix: 16)
        else { throw .malformedChunkedBody }
        return size
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"), UInt8(ascii: "A")...UInt8(ascii: "F"): true
        default: false
        }
    }

    /// The trailer section after the last chunk: field lines (checked as header fields, then dropped)
    /// up to an empty line; the index just past it, nil while it has not all arrived.
    private func trailers(from start: Int) throws(HTTPParseError) -> Int? {
        var index = start
        var ignored = HTTPHeaders()
        while true {
            guard index - start <= limits.headerBytes else { throw .headersTooLarge }
            guard let lineEnd = try lineEnd(from: index, within: limits.headerBytes) else { return nil }
            if lineEnd == index { return index + 2 }
            do throws(HTTPParseError) {
                try Self.parseField(buffer[index..<lineEnd], into: &ignored)
            } catch {
                throw .malformedChunkedBody
            }
            index = lineEnd + 2
        }
    }

    private func contentLength(_ headers: HTTPHeaders) throws(HTTPParseError) -> Int {
        let values = headers.values("Content-Length").flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map { $0.trimmingCharacters(in: " \t") }
        guard let first = values.first else { return 0 }
        guard values.allSatisfy({ $0 == first }), !first.isEmpty, first.allSatisfy({ $0.isASCII && $0.isNumber }) else {
            throw .badContentLength
        }
        // Saturate: a length beyond any limit is "too large", not an overflow.
        guard first.count <= 12, let length = Int(first) else { throw .bodyTooLarge }
        return length
    }

    // MARK: - Bytes

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        default: Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }
}

private let cr = UInt8(ascii: "\r")
private let lf = UInt8(ascii: "\n")
private let space = UInt8(ascii: " ")
private let tab = UInt8(ascii: "\t")
private let slash = UInt8(ascii: "/")
private let star = UInt8(ascii: "*")
private let colonByte = UInt8(ascii: ":")
