import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A raw HTTP server on loopback that answers every connection with `head`, then writes `chunk` every
/// `interval`, `count` times (a server that trickles its answer, or sends far more than asked), and
/// counts the bytes the client let it write before hanging up.
final class SlowServer: Sendable {
    let port: UInt16
    private let listener: Int32
    private let written = Mutex(0)
    private let stopped = Mutex(false)

    var url: String { "http://127.0.0.1:\(port)" }
    /// Body bytes the server got to write before the client went away (or it finished).
    var bodyBytesWritten: Int { written.withLock { $0 } }

    init(head: String, chunk: [UInt8], every interval: Duration, count: Int) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 8) == 0 else {
            close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        let thread = Thread { [self] in serve(head: Array(head.utf8), chunk: chunk, interval: interval, count: count) }
        thread.start()
    }

    /// Stops accepting; the accept thread closes the listener as it leaves (closed here, its number could be
    /// another test's listener by the time the thread calls `accept` on it, and take that test's connection).
    func stop() {
        stopped.withLock { $0 = true }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve(head: [UInt8], chunk: [UInt8], interval: Duration, count: Int) {
        defer { close(listener) }
        while !stopped.withLock({ $0 }) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            Thread { [self] in
                defer { close(connection) }
                var request: [UInt8] = []
                var buffer = [UInt8](repeating: 0, count: 4096)
                while !request.suffix(4).elementsEqual(Array("\r\n\r\n".utf8)) {
                    let read = recv(connection, &buffer, buffer.count, 0)
                    guard read > 0 else { return }
                    request += buffer[0..<read]
                }
                guard send(connection, head, head.count, Int32(MSG_NOSIGNAL)) == head.count else { return }
                for _ in 0..<count {
                    Thread.sleep(forTimeInterval: Double(interval.components.attoseconds) / 1e18 + Double(interval.components.seconds))
                    guard !stopped.withLock({ $0 }), send(connection, chunk, chunk.count, Int32(MSG_NOSIGNAL)) == chunk.count else { return }
                    written.withLock { $0 += chunk.count }
                }
            }.start()
        }
    }
}
