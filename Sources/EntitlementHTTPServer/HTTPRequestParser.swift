/// An incremental HTTP/1.1 request parser (RFC 9112): bytes in as they arrive, whole requests out,
/// one at a time, with pipelined bytes kept for the next. Strict where laxness lets requests be
/// smuggled or misread: CRLF line ends, no folded or space-before-colon fields, one
/// `Content-Length`, no `Transfer-Encoding`. Every refusal is a typed ``HTTPParseError``.
public struct HTTPRequestParser: Sendable {
    /// What the parser has for the server.
    public enum Step: Sendable, Hashable {
        /// A whole request.
        case request(HTTPRequest)
        /// The head is in and asks `Expect: 100-continue`: answer `100 Continue`, then keep reading.
        case continueExpected
        /// More bytes are needed.
        case needMore
    }

    /// The limits applied.
    public let limits: HTTPServerLimits
    private var buffer: [UInt8] = []
    private var scanned = 0  // bytes already searched for the end of the head
    private var requestLineEnded = false  // a line end was seen in the head being searched
    private var head: Head?
    private var continueAnswered = false

    private struct Head {
        var request: HTTPRequest
        var headLength: Int
        var bodyLength: Int
        var expectsContinue: Bool
    }

    /// A parser with `limits`.
    public init(limits: HTTPServerLimits = HTTPServerLimits()) { self.limits = limits }

    /// Whether part of a request has arrived (an idle connection has none).
    public var hasPartialRequest: Bool { !buffer.isEmpty || head != nil }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// The next step: a request, a `100 Continue` to send, or a need for more bytes.
    public mutating func next() throws(HTTPParseError) -> Step {
        if head == nil {
            guard let parsed = try parseHead() else { return .needMore }
            head = parsed
            continueAnswered = false
        }
        guard let current = head else { return .needMore }
        let total = current.headLength + current.bodyLength
        guard buffer.count >= total else {
            if current.expectsContinue, !continueAnswered, buffer.count == current.headLength {
                continueAnswered = true
                return .continueExpected
            }
            return .needMore
        }
        var request = current.request
        request.body = Array(buffer[current.headLength..<total])
        buffer.removeFirst(total)
        head = nil
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
        guard request.headers["Transfer-Encoding"] == nil else { throw .transferEncodingNotSupported }
        let length = try contentLength(request.headers)
        guard length <= limits.bodyBytes else { throw .bodyTooLarge }
        let expects = request.headers["Expect"]?.lowercased() == "100-continue" && length > 0
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
