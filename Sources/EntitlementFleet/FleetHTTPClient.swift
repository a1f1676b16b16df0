import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The harness's HTTP client to its nodes on loopback: one blocking exchange per request on a thread of
/// its own (`Connection: close`, a body read to its `Content-Length`, 60 s at most). `entitle fleet`
/// does not use `URLSession` for this: FoundationNetworking on Linux has crashed the harness under the
/// very faults it injects (`URLSession._MultiHandle.endOperation`, swift-corelibs-foundation#4791).
enum FleetHTTPClient {
    /// What came back: a status and a body, or why nothing did: no connection, the connection failed
    /// mid-exchange (with the system's error number), or no answer within the time limit.
    enum Outcome: Sendable {
        case answered(status: Int, body: [UInt8])
        case unreachable
        case broken(errno: Int32)
        case hung
    }

    static func post(port: UInt16, path: String, body: [UInt8], timeout seconds: Int = 60) async -> Outcome {
        await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: exchange(port: port, path: path, body: body, timeout: seconds)) }
            thread.start()
        }
    }

    private static func exchange(port: UInt16, path: String, body: [UInt8], timeout: Int) -> Outcome {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return .unreachable }
        defer { close(fd) }
        var limit = timeval(tv_sec: timeout, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return .unreachable }
        let head = "POST \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\nContent-Length: \(body.count)\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let wrote = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard wrote > 0 else { return failure(errno) }
            sent += wrote
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let read = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if read == 0 { break }
            guard read > 0 else {
                let error = errno
                if error == EINTR { continue }
                return failure(error)
            }
            answer += buffer[0..<read]
            if let parsed = parse(answer) { return parsed }
        }
        return parse(answer) ?? .unreachable
    }

    /// A failed send or receive: the time limit (SO_RCVTIMEO/SO_SNDTIMEO) ran out, or the connection broke.
    private static func failure(_ error: Int32) -> Outcome {
        error == EAGAIN || error == EWOULDBLOCK ? .hung : .broken(errno: error)
    }

    /// The answer once its head and whole body have arrived.
    private static func parse(_ bytes: [UInt8]) -> Outcome? {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = bytes.firstRange(of: separator) else { return nil }
        let head = String(decoding: bytes[..<end.lowerBound], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let statusLine = lines.first, let status = statusLine.split(separator: " ").dropFirst().first.flatMap({ Int($0) })
        else { return .unreachable }
        var length = 0
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        let body = Array(bytes[end.upperBound...])
        guard body.count >= length else { return nil }
        return .answered(status: status, body: Array(body.prefix(length)))
    }
}
