#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Ports for a Redis Cluster node on loopback: the node's port and its cluster bus port (10000 above).
package enum ClusterNodePort {
    /// A port from 10000 to 19999 free now whose bus port (20000 to 29999) is free too — both below Linux's
    /// ephemeral range (32768 and up), where no outgoing connection takes them, and apart from one another,
    /// so no node takes another's bus port — or nil when 500 draws found none.
    package static func free(avoiding taken: [UInt16]) -> UInt16? {
        for _ in 0..<500 {
            let port = UInt16.random(in: 10_000..<20_000)
            guard !taken.contains(port), isFree(port), isFree(port + 10_000) else { continue }
            return port
        }
        return nil
    }

    /// Whether a listener could bind `port` on 127.0.0.1 now.
    private static func isFree(_ port: UInt16) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        } == 0
    }
}
