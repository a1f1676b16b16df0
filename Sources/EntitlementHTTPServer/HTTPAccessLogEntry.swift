/// One answered request, for the access log.
package struct HTTPAccessLogEntry: Sendable, Hashable {
    /// The client's address.
    package var peer: String
    /// The method (`-` when the request could not be read).
    package var method: String
    /// The request target as received (shorten secrets before printing it).
    package var target: String
    /// The status answered.
    package var status: Int
    /// The body's size in bytes.
    package var bytes: Int
    /// How long the answer took.
    package var duration: Duration

    /// Creates an entry.
    package init(peer: String, method: String, target: String, status: Int, bytes: Int, duration: Duration) {
        self.peer = peer
        self.method = method
        self.target = target
        self.status = status
        self.bytes = bytes
        self.duration = duration
    }

    /// `127.0.0.1 "GET /path" 200 512 B 1.3 ms`, with the target passed through `shorten`.
    package func line(shorten: (String) -> String = { $0 }) -> String {
        let micros = duration.components.seconds * 1_000_000 + duration.components.attoseconds / 1_000_000_000_000
        let millis = Double(micros) / 1000
        return "\(peer) \"\(method) \(shorten(target))\" \(status) \(bytes) B \((millis * 10).rounded() / 10) ms"
    }
}

extension Duration {
    var milliseconds: Int64 {
        let parts = components
        let (whole, overflow) = parts.seconds.multipliedReportingOverflow(by: 1000)
        if overflow { return parts.seconds < 0 ? .min : .max }
        return whole.addingReportingOverflow(parts.attoseconds / 1_000_000_000_000_000).partialValue
    }
}
