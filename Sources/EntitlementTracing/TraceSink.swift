import EntitlementEngine
#if canImport(Glibc)
    import Glibc
    private func closeDescriptor(_ descriptor: Int32) -> Int32 { Glibc.close(descriptor) }
    private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        Glibc.write(descriptor, bytes.baseAddress, bytes.count)
    }
#elseif canImport(Darwin)
    import Darwin
    private func closeDescriptor(_ descriptor: Int32) -> Int32 { Darwin.close(descriptor) }
    private func writeBytes(_ descriptor: Int32, _ bytes: UnsafeRawBufferPointer) -> Int {
        Darwin.write(descriptor, bytes.baseAddress, bytes.count)
    }
#endif
import Synchronization

/// Where a streaming ``TraceRecorder`` writes: one line at a time, in the trace's canonical form (the
/// header first), each without its newline. Lines hold placeholders, never secrets.
public protocol TraceSink: Sendable {
    /// Takes one line of the trace.
    func write(line: String)
}

/// A sink that appends each line, with its newline, to a file (a `.jsonl` trace `entitle replay` reads).
/// Lines are buffered and written in blocks; ``close()`` (or releasing the sink) writes the rest.
public final class FileTraceSink: TraceSink {
    /// Why a file sink could not be opened.
    public struct OpenError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The path.
        public var path: String
        /// The system's reason.
        public var errno: Int32
        /// `cannot write PATH: REASON`.
        public var description: String { "cannot write \(path): \(String(cString: strerror(errno)))" }
    }

    private struct State {
        var descriptor: Int32
        var buffer: [UInt8] = []
        var failed = false
    }

    /// The bytes buffered before a write.
    static let blockSize = 64 * 1024
    private let state: Mutex<State>

    /// Creates (or truncates) the file at `path`, readable and writable by the owner only (a trace holds
    /// placeholders, not secrets, but describes a user's session).
    public init(path: String) throws(OpenError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw OpenError(path: path, errno: errno) }
        state = Mutex(State(descriptor: descriptor))
    }

    deinit { close() }

    /// Appends `line` and a newline.
    public func write(line: String) {
        state.withLock { state in
            guard state.descriptor >= 0 else { return }
            state.buffer.append(contentsOf: line.utf8)
            state.buffer.append(UInt8(ascii: "\n"))
            if state.buffer.count >= Self.blockSize { Self.flush(&state) }
        }
    }

    /// Writes what is buffered and closes the file; later lines are dropped. Whether every line reached
    /// the file.
    @discardableResult
    public func close() -> Bool {
        state.withLock { state in
            guard state.descriptor >= 0 else { return !state.failed }
            Self.flush(&state)
            if closeDescriptor(state.descriptor) != 0 { state.failed = true }
            state.descriptor = -1
            return !state.failed
        }
    }

    private static func flush(_ state: inout State) {
        guard state.descriptor >= 0, !state.buffer.isEmpty else { return }
        var offset = 0
        while offset < state.buffer.count {
            let written = state.buffer[offset...].withUnsafeBytes { writeBytes(state.descriptor, $0) }
            if written < 0, errno == EINTR { continue }
            guard written > 0 else {
                state.failed = true
                break
            }
            offset += written
        }
        state.buffer.removeAll(keepingCapacity: true)
    }
}
