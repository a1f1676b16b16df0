#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why token storage refused an operation. Every storage call throws only this type, so the
/// engine can tell a conflict (re-read and decide again) from a failure (report it, save again later).
public enum TokenStorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A compare-and-set lost: the store no longer holds the version the save named. Nothing was written.
    case conflict(current: StorageVersion)
    /// The file could not be read as a token file of this format; it was moved to `movedTo`.
    case corrupt(file: String, movedTo: String)
    /// The file belongs to another requestor or format; it was moved to `movedTo`.
    case foreign(file: String, movedTo: String)
    /// The stored value is larger than the store accepts to read (`limit` bytes); nothing was read.
    case tooLarge(file: String, limit: Int)
    /// The store's location is not what it must be (not a folder, a symbolic link, …).
    case refusedLocation(String)
    /// A system call failed.
    case system(String, errno: Int32)
    /// The store could not be reached or answered wrongly (network stores): the reason, with no secret in it.
    case unavailable(String)
    /// This writer may write nothing more (its process ended, its store was closed); not worth retrying.
    case closed(String)

    /// Whether the same operation may well succeed if tried again shortly: the store was unreachable,
    /// restarting, busy or timed out (``unavailable(_:)``, or a system call interrupted, busy or timed
    /// out). A full disk, a refused location, a corrupt file or a lost compare-and-set are not.
    public var isTransient: Bool {
        switch self {
        case .unavailable: true
        case .system(_, let code): [EINTR, EAGAIN, EBUSY, ETIMEDOUT, ECONNRESET, ECONNREFUSED, EIO].contains(code)
        case .conflict, .corrupt, .foreign, .tooLarge, .refusedLocation, .closed: false
        }
    }

    /// A sentence naming the file or reason; it never contains a token.
    public var description: String {
        switch self {
        case .conflict(let current): "another writer changed the tokens first (the store holds \(current))"
        case .corrupt(let file, let movedTo): "the token file \(file) is corrupt; it was moved to \(movedTo)"
        case .foreign(let file, let movedTo): "the token file \(file) belongs to something else; it was moved to \(movedTo)"
        case .tooLarge(let file, let limit): "the token file \(file) is larger than \(limit) bytes; it was not read"
        case .refusedLocation(let why): why
        case .system(let call, let code): "\(call) failed: \(String(cString: strerror(code)))"
        case .unavailable(let why): "token storage is unavailable: \(why)"
        case .closed(let why): "token storage takes no more writes: \(why)"
        }
    }
}
