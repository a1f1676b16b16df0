#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import EntitlementSupport
import Foundation
import Synchronization

/// Token storage in files, one per device and requestor, for the embedded default.
///
/// Guarantees:
/// - **Compare-and-set**: a save holds the file's lock, reads the stored version and writes only
///   if it is the one the writer names (``TokenStorage``'s contract), so processes sharing the
///   folder never overwrite each other's update.
/// - **Atomic**: a save writes a temporary file in the same folder, flushes it to disk (`fsync`),
///   renames it over the old file and flushes the folder; a reader sees the old or the new
///   contents, never a mix, even if the writer is killed at any point.
/// - **Private and contained**: the folder is `0700` and files are `0600`; a path that is not a
///   folder, or is a symbolic link, is refused (never `chmod`ed); files inside are opened with
///   `O_NOFOLLOW`, so a symbolic link planted in the folder is never followed out of it.
/// - **Bounded**: a file larger than `maximumFileSize` is refused unread.
/// - **Cheap to watch**: ``version(deviceID:requestorID:)`` answers from the file's identity
///   (device, inode, size, modification time — every save renames a new inode in) and reads
///   the file only when that changed.
/// - **Never crashes on bad files**: a corrupt or foreign file is moved aside (`NAME.corrupt-N`) and
///   the load throws ``TokenStorageError``; the engine then starts with no tokens.
///
/// File I/O is synchronous under the calls' `async` signatures (a file system call blocks briefly);
/// waiting for a lock another process or engine holds happens on a thread of its own, never on Swift
/// concurrency's. That wait ends when the holder releases the lock — at the latest when its process
/// ends — and is not cancellable.
public final class FileTokenStorage: TokenStorage {
    /// The folder holding the files.
    package let folder: String
    /// The largest token file read, in bytes (8 MiB: some 50,000 cached authorizations).
    package let maximumFileSize: Int
    private let counter = Mutex(0)
    /// What each file's identity meant last time it was read or written here.
    private let known = Mutex<[String: (identity: FileIdentity, version: StorageVersion)]>([:])
    /// What seals each file before it is written and opens it after (nil: files are plain JSON).
    package let sealing: (any TokenSealing)?

    /// The format of the files this version writes and reads.
    static let format = 1

    private struct FormatOnly: Decodable {
        var format: Int
    }

    private struct Envelope: Codable {
        var format: Int
        var device: String
        var requestor: String
        var version: UInt64?
        var tokens: StoredTokens
    }

    private struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
        var size: Int64
        var seconds: Int
        var nanoseconds: Int

        init(_ info: stat) {
            device = UInt64(truncatingIfNeeded: info.st_dev)
            inode = UInt64(truncatingIfNeeded: info.st_ino)
            size = Int64(info.st_size)
            seconds = Int(info.st_mtim.tv_sec)
            nanoseconds = Int(info.st_mtim.tv_nsec)
        }
    }

    /// Opens the folder, creating it (`0700`) if needed.
    /// - Throws: ``TokenStorageError/refusedLocation(_:)`` when `folder` exists but is not a folder
    ///   or is a symbolic link; ``TokenStorageError/system(_:errno:)`` when it cannot be created.
    /// `sealing` seals each file at rest (``TokenSealing``): the device id, the user's ids and metadata in it.
    public init(folder: String, maximumFileSize: Int = 8 << 20, sealing: (any TokenSealing)? = nil) throws(TokenStorageError) {
        self.folder = folder
        self.sealing = sealing
        self.maximumFileSize = max(1024, maximumFileSize)
        if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw .system("mkdir \(folder)", errno: errno) }
        var info = stat()
        guard lstat(folder, &info) == 0 else { throw .system("lstat \(folder)", errno: errno) }
        switch info.st_mode & S_IFMT {
        case S_IFDIR: break
        case S_IFLNK: throw .refusedLocation("\(folder) is a symbolic link; give the folder's real path")
        default: throw .refusedLocation("\(folder) is not a folder")
        }
        if info.st_mode & 0o777 != 0o700 && chmod(folder, 0o700) != 0 { throw .system("chmod \(folder)", errno: errno) }
    }

    /// The file for `deviceID` and `requestorID` (names are hashed: ids never appear in file names).
    package func path(deviceID: String, requestorID: String) -> String {
        folder + "/" + Hex.encode(Array(SHA256.hash(deviceID + "\u{1F}" + requestorID).prefix(16))) + ".tokens"
    }

    // MARK: - TokenStorage

    /// The stored tokens and their version (``VersionedTokens/absent`` when there is no file).
    public func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        let file = path(deviceID: deviceID, requestorID: requestorID)
        return try await locked(file) { () throws(TokenStorageError) -> VersionedTokens in
            try self.readTokens(file, requestorID: requestorID)
        }
    }

    /// Replaces the stored tokens atomically if the file still holds `expected`.
    public func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        let file = path(deviceID: deviceID, requestorID: requestorID)
        let sealing = sealing
        return try await locked(file) { () throws(TokenStorageError) -> StorageVersion in
            let current = try self.currentVersion(file, requestorID: requestorID)
            guard current == expected else { throw .conflict(current: current) }
            let next = current.next
            let envelope = Envelope(format: Self.format, device: deviceID, requestor: requestorID, version: next.number, tokens: tokens)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            guard let data = try? encoder.encode(envelope) else { throw .unavailable("the tokens could not be encoded") }
            let identity = try self.writeAtomically(try SealedValue.stored(Array(data), sealing: sealing), to: file)
            self.known.withLock { $0[file] = (identity, next) }
            return next
        }
    }

    /// The file's version, from its identity when it has not changed since it was last seen here.
    public func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        let file = path(deviceID: deviceID, requestorID: requestorID)
        if let version = try cachedVersion(file) { return version }
        return try await locked(file) { () throws(TokenStorageError) -> StorageVersion in
            try self.currentVersion(file, requestorID: requestorID)
        }
    }

    /// The file's version when its identity (device, inode, size, modification time) is the one last
    /// read or written here — one `lstat`, no lock; nil when the file must be read.
    public func knownVersion(deviceID: String, requestorID: String) -> StorageVersion? {
        (try? cachedVersion(path(deviceID: deviceID, requestorID: requestorID))) ?? nil
    }

    /// The authentications stored for `deviceID` under any requestor (files that cannot be read,
    /// or belong to another device, are skipped here: ``load(deviceID:requestorID:)`` reports them).
    public func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        var found: [AuthenticationToken] = []
        for name in names.filter({ $0.hasSuffix(".tokens") }).sorted() {
            let file = folder + "/" + name
            let sealing = sealing
            let envelope = try? await locked(file) { () throws(TokenStorageError) -> Envelope? in
                try self.contents(file).flatMap { stored in
                    (try? SealedValue.plain(stored, sealing: sealing)).flatMap { try? JSONDecoder().decode(Envelope.self, from: Data($0)) }
                }
            }
            guard let envelope = envelope ?? nil, envelope.format == Self.format, envelope.device == deviceID,
                envelope.tokens.deviceID ?? deviceID == deviceID, let authentication = envelope.tokens.authentication
            else { continue }
            found.append(authentication)
        }
        return found
    }

    // MARK: - Reading

    /// Reads and checks `file` (the caller holds its lock).
    private func readTokens(_ file: String, requestorID: String) throws(TokenStorageError) -> VersionedTokens {
        guard let (stored, identity) = try contentsAndIdentity(file) else { return .absent }
        // A file sealed with another key is left where it is: the key is wrong, not the file.
        let bytes = try SealedValue.plain(stored, sealing: sealing)
        // A newer version's file stays where it is: it is not corrupt, this version is old.
        if let written = try? JSONDecoder().decode(FormatOnly.self, from: Data(bytes)), written.format > Self.format {
            throw .newerFormat("\(file) is in format \(written.format); this version reads format \(Self.format)")
        }
        guard let envelope = try? JSONDecoder().decode(Envelope.self, from: Data(bytes)) else {
            throw .corrupt(file: file, movedTo: try moveAside(file))
        }
        guard envelope.format == Self.format, envelope.requestor == requestorID else {
            throw .foreign(file: file, movedTo: try moveAside(file))
        }
        // Files written before versions existed count as version 1.
        let version = StorageVersion(max(1, envelope.version ?? 1))
        known.withLock { $0[file] = (identity, version) }
        // A file of another device is returned as it is: the engine clears it and reports SEC412.
        var tokens = envelope.tokens
        guard !tokens.holdsNothing else { return VersionedTokens(.empty, version: version) }
        tokens.deviceID = tokens.deviceID ?? envelope.device
        return VersionedTokens(tokens, version: version)
    }

    /// The version of `file` (the caller holds its lock): from its identity, else by reading it.
    private func currentVersion(_ file: String, requestorID: String) throws(TokenStorageError) -> StorageVersion {
        if let version = try cachedVersion(file) { return version }
        return try readTokens(file, requestorID: requestorID).version
    }

    /// The version remembered for `file`'s current identity; ``StorageVersion/absent`` without a file; nil when unknown.
    private func cachedVersion(_ file: String) throws(TokenStorageError) -> StorageVersion? {
        var info = stat()
        guard lstat(file, &info) == 0 else {
            guard errno == ENOENT else { throw .system("lstat \(file)", errno: errno) }
            return .absent
        }
        let identity = FileIdentity(info)
        return known.withLock { known in known[file].flatMap { $0.identity == identity ? $0.version : nil } }
    }

    private func contents(_ file: String) throws(TokenStorageError) -> [UInt8]? {
        try contentsAndIdentity(file)?.0
    }

    /// The bytes of `file` and its identity, nil when there is none; never follows a symbolic link
    /// and never reads more than `maximumFileSize`.
    private func contentsAndIdentity(_ file: String) throws(TokenStorageError) -> ([UInt8], FileIdentity)? {
        let descriptor = open(file, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            if errno == ELOOP { throw .refusedLocation("\(file) is a symbolic link; it was not followed") }
            throw .system("open \(file)", errno: errno)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw .system("fstat \(file)", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .refusedLocation("\(file) is not a regular file") }
        guard info.st_size <= maximumFileSize else { throw .tooLarge(file: file, limit: maximumFileSize) }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
        var filled = 0
        while filled < bytes.count {
            let result = bytes.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + filled, $0.count - filled) }
            if result < 0 && errno == EINTR { continue }
            guard result >= 0 else { throw .system("read \(file)", errno: errno) }
            if result == 0 { break }
            filled += result
        }
        return (Array(bytes.prefix(filled)), FileIdentity(info))
    }

    // MARK: - Writing

    /// Writes `bytes` to a new temporary file, flushes it, renames it over `file`, flushes the
    /// folder; returns the new file's identity.
    private func writeAtomically(_ bytes: [UInt8], to file: String) throws(TokenStorageError) -> FileIdentity {
        let number = counter.withLock { value -> Int in
            value += 1
            return value
        }
        let temporary = "\(file).tmp-\(getpid())-\(number)"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .system("open \(temporary)", errno: errno) }
        func fail(_ call: String) -> TokenStorageError {
            let code = errno
            close(descriptor)
            unlink(temporary)
            return .system("\(call) \(temporary)", errno: code)
        }
        var written = 0
        while written < bytes.count {
            let result = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, bytes.count - written) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { throw fail("write") }
            written += result
        }
        guard fsync(descriptor) == 0 else { throw fail("fsync") }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { throw fail("fstat") }
        close(descriptor)
        guard rename(temporary, file) == 0 else {
            let code = errno
            unlink(temporary)
            throw .system("rename \(temporary)", errno: code)
        }
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        if directory >= 0 {
            fsync(directory)
            close(directory)
        }
        return FileIdentity(info)
    }

    /// Moves a bad file to `NAME.corrupt-N` (the first free N) and returns the new path.
    private func moveAside(_ file: String) throws(TokenStorageError) -> String {
        var number = 1
        var info = stat()
        while lstat("\(file).corrupt-\(number)", &info) == 0 { number += 1 }
        let target = "\(file).corrupt-\(number)"
        guard rename(file, target) == 0 else { throw .system("rename \(file)", errno: errno) }
        known.withLock { $0[file] = nil }
        return target
    }

    /// Runs `body` holding an exclusive advisory lock on `file`'s lock file (never a symbolic link).
    /// A free lock is taken and `body` run on the calling task; a lock another writer holds is waited
    /// for, and `body` run, on a thread of its own (``OwnThread``): a wait of unknown length never
    /// holds one of Swift concurrency's threads.
    private func locked<T: Sendable>(
        _ file: String, _ body: @escaping @Sendable () throws(TokenStorageError) -> T
    ) async throws(TokenStorageError) -> T {
        let lock = open(file + ".lock", O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard lock >= 0 else {
            if errno == ELOOP { throw .refusedLocation("\(file).lock is a symbolic link; it was not followed") }
            throw .system("open \(file).lock", errno: errno)
        }
        if flock(lock, LOCK_EX | LOCK_NB) == 0 {
            defer {
                flock(lock, LOCK_UN)
                close(lock)
            }
            return try body()
        }
        guard errno == EWOULDBLOCK || errno == EINTR else {
            let error = errno
            close(lock)
            throw .system("flock \(file).lock", errno: error)
        }
        let result = await OwnThread.run { () -> Result<T, TokenStorageError> in
            defer { close(lock) }
            while flock(lock, LOCK_EX) != 0 {
                guard errno == EINTR else { return .failure(.system("flock \(file).lock", errno: errno)) }
            }
            defer { flock(lock, LOCK_UN) }
            do throws(TokenStorageError) {
                return .success(try body())
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
