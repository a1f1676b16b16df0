import EntitlementEngine
#if canImport(Glibc)
    import Glibc
    private func closeFile(_ descriptor: Int32) { _ = Glibc.close(descriptor) }
    private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        Glibc.read(descriptor, buffer.baseAddress, buffer.count)
    }
#elseif canImport(Darwin)
    import Darwin
    private func closeFile(_ descriptor: Int32) { _ = Darwin.close(descriptor) }
    private func readFile(_ descriptor: Int32, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
        Darwin.read(descriptor, buffer.baseAddress, buffer.count)
    }
#endif

/// Reads a trace file one line at a time, in 64 KB blocks: only the current line and one block are in
/// memory. Every line must end with a newline; a line longer than ``maximumLineLength`` is refused.
struct TraceLineReader: ~Copyable {
    /// The longest line read (a record is a few hundred bytes; anything near this is not a trace).
    static let maximumLineLength = 16 << 20

    private let descriptor: Int32
    private var block = [UInt8](repeating: 0, count: 64 << 10)
    private var blockStart = 0
    private var blockEnd = 0
    private var line = 0
    private var atEnd = false

    /// Opens `path` for reading.
    init(path: String) throws(TraceError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { throw TraceError(line: 1, reason: .unreadable(String(cString: strerror(errno)))) }
        self.descriptor = descriptor
    }

    deinit { closeFile(descriptor) }

    /// The next line without its newline, or nil at the end of the file.
    mutating func next() throws(TraceError) -> [UInt8]? {
        var current: [UInt8] = []
        while true {
            if blockStart < blockEnd {
                let available = block[blockStart..<blockEnd]
                if let newline = available.firstIndex(of: UInt8(ascii: "\n")) {
                    current.append(contentsOf: block[blockStart..<newline])
                    blockStart = newline + 1
                    line += 1
                    return current
                }
                current.append(contentsOf: available)
                blockStart = blockEnd
                guard current.count <= Self.maximumLineLength else {
                    throw TraceError(line: line + 1, reason: .notJSON("a line longer than \(Self.maximumLineLength) bytes"))
                }
            }
            guard !atEnd else {
                if current.isEmpty { return nil }
                throw TraceError(line: line + 1, reason: .truncated)
            }
            let count = block.withUnsafeMutableBytes { readFile(descriptor, $0) }
            if count < 0 {
                if errno == EINTR { continue }
                throw TraceError(line: line + 1, reason: .unreadable(String(cString: strerror(errno))))
            }
            if count == 0 { atEnd = true }
            blockStart = 0
            blockEnd = count
        }
    }
}
