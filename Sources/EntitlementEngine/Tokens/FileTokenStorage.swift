#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation
import Synchronization

/// Why the file store refused a file or an operation.
public enum TokenStorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file could not be read as a token file of this format; it was moved to `movedTo`.
    case corrupt(file: String, movedTo: String)
    /// The file belongs to another requestor or format; it was moved to `movedTo`.
    case foreign(file: String, movedTo: String)
    /// A system call failed.
    case system(String, errno: Int32)

    /// A sentence naming the file.
    public var description: String {
        switch self {
        case .corrupt(let file, let movedTo): "the token file \(file) is corrupt; it was moved to \(movedTo)"
        case .foreign(let file, let movedTo): "the token file \(file) belongs to something else; it was moved to \(movedTo)"
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        }
    }
}

/// Token storage in files, one per device and requestor, for the embedded default.
///
/// Guarantees:
/// - **Atomic**: a save writes a temporary file in the same folder, flushes it to disk (`fsync`),
///   renames it over the old file and flushes the folder; a reader sees the old or the new
///   contents, never a mix, even if the writer is killed at any point.
/// - **Private**: the folder is `0700` and files are `0600`.
/// - **Shared safely**: processes sharing the folder take an advisory lock (`flock`) on the file's
///   lock file around every load and save, and temporary files are unique per process.
/// - **Never crashes on bad files**: a corrupt or foreign file is moved aside (`NAME.corrupt-N`) and
///   the load throws ``TokenStorageError``; the engine then starts with no tokens.
public final class FileTokenStorage: TokenStorage {
    /// The folder holding the files.
    public let folder: String
    private let counter = Mutex(0)

    private struct Envelope: Codable {
        var format: Int
        var device: String
        var requestor: String
        var tokens: StoredTokens
    }

    /// Opens (and if needed creates, `0700`) the folder.
    public init(folder: String) throws(TokenStorageError) {
        self.folder = folder
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw .system("mkdir \(folder)", errno: errno) }
        chmod(folder, 0o700)
    }

    /// The file for `deviceID` and `requestorID` (names are hashed: ids never appear in file names).
    public func path(deviceID: String, requestorID: String) -> String {
        folder + "/" + Hex.encode(Array(SHA256.hash(deviceID + "\u{1F}" + requestorID).prefix(16))) + ".tokens"
    }

    /// The stored tokens (``StoredTokens/empty`` when there is no file).
    public func load(deviceID: String, requestorID: String) throws -> StoredTokens {
        let file = path(deviceID: deviceID, requestorID: requestorID)
        return try locked(file) { () throws -> StoredTokens in
            guard let data = FileManager.default.contents(atPath: file) else { return .empty }
            guard let envelope = try? JSONDecoder().decode(Envelope.self, from: data) else {
                throw TokenStorageError.corrupt(file: file, movedTo: try moveAside(file))
            }
            guard envelope.format == 1, envelope.requestor == requestorID else {
                throw TokenStorageError.foreign(file: file, movedTo: try moveAside(file))
            }
            // A file of another device is returned as it is: the engine clears it and reports SEC412.
            var tokens = envelope.tokens
            guard !tokens.holdsNothing else { return .empty }
            tokens.deviceID = tokens.deviceID ?? envelope.device
            return tokens
        }
    }

    /// The authentications stored for `deviceID` under any requestor (files that cannot be read,
    /// or belong to another device, are skipped here: ``load(deviceID:requestorID:)`` reports them).
    public func authentications(deviceID: String) throws -> [AuthenticationToken] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasSuffix(".tokens") }.sorted().compactMap { name -> AuthenticationToken? in
            let file = folder + "/" + name
            let envelope = try? locked(file) { () throws -> Envelope? in
                try FileManager.default.contents(atPath: file).map { try JSONDecoder().decode(Envelope.self, from: $0) }
            }
            guard let envelope = envelope ?? nil, envelope.format == 1, envelope.device == deviceID,
                envelope.tokens.deviceID ?? deviceID == deviceID
            else { return nil }
            return envelope.tokens.authentication
        }
    }

    /// Replaces the stored tokens atomically.
    public func save(_ tokens: StoredTokens, deviceID: String, requestorID: String) throws {
        let file = path(deviceID: deviceID, requestorID: requestorID)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(Envelope(format: 1, device: deviceID, requestor: requestorID, tokens: tokens))
        try locked(file) { () throws -> Void in try writeAtomically(Array(data), to: file) }
    }

    // MARK: - Files

    /// Writes `bytes` to a new temporary file, flushes it, renames it over `file`, flushes the folder.
    private func writeAtomically(_ bytes: [UInt8], to file: String) throws {
        let number = counter.withLock { value -> Int in
            value += 1
            return value
        }
        let temporary = "\(file).tmp-\(getpid())-\(number)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw TokenStorageError.system("open \(temporary)", errno: errno) }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            guard result > 0 else {
                let code = errno
                close(descriptor)
                unlink(temporary)
                throw TokenStorageError.system("write \(temporary)", errno: code)
            }
            written += result
        }
        guard fsync(descriptor) == 0 else {
            let code = errno
            close(descriptor)
            unlink(temporary)
            throw TokenStorageError.system("fsync \(temporary)", errno: code)
        }
        close(descriptor)
        guard rename(temporary, file) == 0 else {
            let code = errno
            unlink(temporary)
            throw TokenStorageError.system("rename \(temporary)", errno: code)
        }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
    }

    /// Moves a bad file to `NAME.corrupt-N` (the first free N) and returns the new path.
    private func moveAside(_ file: String) throws -> String {
        var number = 1
        while FileManager.default.fileExists(atPath: "\(file).corrupt-\(number)") { number += 1 }
        let target = "\(file).corrupt-\(number)"
        guard rename(file, target) == 0 else { throw TokenStorageError.system("rename \(file)", errno: errno) }
        return target
    }

    /// Runs `body` holding an exclusive advisory lock on `file`'s lock file.
    private func locked<T>(_ file: String, _ body: () throws -> T) throws -> T {
        let lock = open(file + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard lock >= 0 else { throw TokenStorageError.system("open \(file).lock", errno: errno) }
        defer { close(lock) }
        while flock(lock, LOCK_EX) != 0 {
            guard errno == EINTR else { throw TokenStorageError.system("flock \(file).lock", errno: errno) }
        }
        defer { flock(lock, LOCK_UN) }
        return try body()
    }
}
