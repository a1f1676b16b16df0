#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

import Foundation

/// A loopback TCP connection for tests: writes raw bytes, reads what comes back. Its blocking
/// socket calls run on threads of their own, never on the Swift concurrency pool the server's handlers
/// need.
final class RawConnection: @unchecked Sendable {
    let fd: Int32

    static func open(port: UInt16) async -> RawConnection? { await offPool { RawConnection(port: port) } }

    init?(port: UInt16) {
        #if canImport(Glibc)
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
            fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        var timeout = timeval(tv_sec: 600, tv_usec: 0)  // only a failure waits this long; a loaded 2-core machine needs the room
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) { sendBytes(Array(text.utf8)) }

    func sendBytes(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    /// Everything until the server closes (or 20 s of silence).
    func readToEnd() async -> String { await offPool { self.readToEndBlocking() } }

    /// Reads until `count` answers have arrived whole (by their Content-Length).
    func readAnswers(_ count: Int) async -> [String] { await offPool { self.readAnswersBlocking(count) } }

    private func readToEndBlocking() -> String {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = receive(into: &chunk)
            if count < 0 { return String(decoding: all, as: UTF8.self) + "<recv failed: errno \(-count)>" }
            guard count > 0 else { break }
            all += chunk[0..<count]
        }
        return String(decoding: all, as: UTF8.self)
    }

    private func readAnswersBlocking(_ count: Int) -> [String] {
        var all: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while Self.answers(in: all).count < count {
            let read = receive(into: &chunk)
            guard read > 0 else { break }
            all += chunk[0..<read]
        }
        return Self.answers(in: all)
    }

    /// One `recv`, again when a signal interrupted it: the count read, 0 at the end, or minus `errno`
    /// (a failure the caller shows, so a failing test says why it read nothing).
    private func receive(into chunk: inout [UInt8]) -> Int {
        while true {
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count >= 0 { return count }
            if errno != EINTR { return -Int(errno) }
        }
    }

    private static func answers(in bytes: [UInt8]) -> [String] {
        var answers: [String] = []
        var rest = String(decoding: bytes, as: UTF8.self)[...]
        while let headEnd = rest.range(of: "\r\n\r\n") {
            let head = rest[..<headEnd.lowerBound]
            let length = head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("content-length:") }
                .flatMap { Int($0.split(separator: ":")[1].trimmingCharacters(in: .whitespaces)) } ?? 0
            let bodyStart = headEnd.upperBound
            guard rest.utf8.distance(from: bodyStart, to: rest.endIndex) >= length else { break }
            let bodyEnd = rest.utf8.index(bodyStart, offsetBy: length)
            answers.append(String(rest[rest.startIndex..<bodyEnd]))
            rest = rest[bodyEnd...]
        }
        return answers
    }
}

/// Runs blocking `work` on a thread of its own: not on Dispatch's global queues, which Swift
/// concurrency's executor shares on Linux (blocking them starves the server's handlers).
func offPool<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { done in Thread { done.resume(returning: work()) }.start() }
}

/// Runs blocking, throwing `work` on a thread of its own.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { done in Thread { done.resume(with: Result { try work() }) }.start() }
}
