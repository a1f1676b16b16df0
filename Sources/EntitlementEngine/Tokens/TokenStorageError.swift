#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Why token storage refused an operation. Every storage call throws only this type, so the
/// engine can tell a conflict (re-read and decide again) from a failure (report it, save again later).
///
/// A struct, not an enum, so stores can report new kinds of failure without breaking a client's
/// `switch`: look at ``code`` (`error.code == .conflict`) and ``isTransient``; make one with the static
/// members (`throw .unavailable("…")`).
public struct TokenStorageError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure it is; more kinds may come.
    public struct Code: Sendable, Hashable, CustomStringConvertible {
        private enum Kind: String, Sendable, Hashable {
            case conflict, corrupt, foreign, tooLarge, refusedLocation, system, unavailable, closed, unsealable, newerFormat
        }
        private let kind: Kind
        private init(_ kind: Kind) { self.kind = kind }

        /// A compare-and-set lost: the store no longer holds the version the save named. Nothing was written.
        public static let conflict = Code(.conflict)
        /// The stored value could not be read as tokens of this format; it was moved aside.
        public static let corrupt = Code(.corrupt)
        /// The stored value belongs to another requestor or format; it was moved aside.
        public static let foreign = Code(.foreign)
        /// The stored value is larger than the store accepts to read; nothing was read.
        public static let tooLarge = Code(.tooLarge)
        /// The store's location is not what it must be (not a folder, a symbolic link, …).
        public static let refusedLocation = Code(.refusedLocation)
        /// A system call failed.
        public static let system = Code(.system)
        /// The store could not be reached or answered wrongly (network stores).
        public static let unavailable = Code(.unavailable)
        /// This writer may write nothing more (its process ended, its store was closed).
        public static let closed = Code(.closed)
        /// The stored value is sealed and this store cannot open it (sealed with another key, or the store
        /// has no ``TokenSealing``); nothing was read, moved or changed.
        public static let unsealable = Code(.unsealable)
        /// The stored value was written in a format newer than this version reads (by a newer version of
        /// the package); nothing was read, moved or changed — run the newer version, or move it aside.
        public static let newerFormat = Code(.newerFormat)

        /// The code's name (`conflict`).
        public var description: String { kind.rawValue }
    }

    /// What kind of failure it is.
    public let code: Code
    /// The version the store holds (``Code/conflict``).
    public let current: StorageVersion?
    /// The file concerned (``Code/corrupt``, ``Code/foreign``, ``Code/tooLarge``).
    public let file: String?
    /// Where the refused file was moved (``Code/corrupt``, ``Code/foreign``).
    public let movedTo: String?
    /// The size limit, in bytes (``Code/tooLarge``).
    public let limit: Int?
    /// The system call's `errno` (``Code/system``).
    public let errno: Int32?
    /// The reason in words, with no secret in it — for ``Code/system`` the call that failed.
    public let reason: String?

    private init(
        _ code: Code, current: StorageVersion? = nil, file: String? = nil, movedTo: String? = nil, limit: Int? = nil,
        errno: Int32? = nil, reason: String? = nil
    ) {
        self.code = code
        self.current = current
        self.file = file
        self.movedTo = movedTo
        self.limit = limit
        self.errno = errno
        self.reason = reason
    }

    /// A compare-and-set lost: the store holds `current`, not the version the save named. Nothing was written.
    public static func conflict(current: StorageVersion) -> TokenStorageError { TokenStorageError(.conflict, current: current) }
    /// The file could not be read as a token file of this format; it was moved to `movedTo`.
    public static func corrupt(file: String, movedTo: String) -> TokenStorageError {
        TokenStorageError(.corrupt, file: file, movedTo: movedTo)
    }
    /// The file belongs to another requestor or format; it was moved to `movedTo`.
    public static func foreign(file: String, movedTo: String) -> TokenStorageError {
        TokenStorageError(.foreign, file: file, movedTo: movedTo)
    }
    /// The stored value is larger than the store accepts to read (`limit` bytes); nothing was read.
    public static func tooLarge(file: String, limit: Int) -> TokenStorageError { TokenStorageError(.tooLarge, file: file, limit: limit) }
    /// The store's location is not what it must be (not a folder, a symbolic link, …): `why`.
    public static func refusedLocation(_ why: String) -> TokenStorageError { TokenStorageError(.refusedLocation, reason: why) }
    /// The system call `call` failed with `errno`.
    public static func system(_ call: String, errno: Int32) -> TokenStorageError { TokenStorageError(.system, errno: errno, reason: call) }
    /// The store could not be reached or answered wrongly (network stores): `why`, with no secret in it.
    public static func unavailable(_ why: String) -> TokenStorageError { TokenStorageError(.unavailable, reason: why) }
    /// This writer may write nothing more (its process ended, its store was closed): `why`; not worth retrying.
    public static func closed(_ why: String) -> TokenStorageError { TokenStorageError(.closed, reason: why) }
    /// ``Code/unsealable``: the sealed tokens cannot be opened here (`why`, with no secret in it).
    public static func unsealable(_ why: String) -> TokenStorageError { TokenStorageError(.unsealable, reason: why) }
    /// Tokens in a newer format: `why` names where and which.
    public static func newerFormat(_ why: String) -> TokenStorageError { TokenStorageError(.newerFormat, reason: why) }

    /// Whether the same operation may well succeed if tried again shortly: the store was unreachable,
    /// restarting, busy or timed out (``Code/unavailable``, or a system call interrupted, busy or timed
    /// out). A full disk, a refused location, a corrupt file or a lost compare-and-set are not.
    public var isTransient: Bool {
        switch code {
        case .unavailable: true
        case .system: [EINTR, EAGAIN, EBUSY, ETIMEDOUT, ECONNRESET, ECONNREFUSED, EIO].contains(errno ?? 0)
        default: false
        }
    }

    /// A sentence naming the file or reason; it never contains a token.
    public var description: String {
        let file = file ?? "?"
        let why = reason ?? ""
        switch code {
        case .conflict: return "another writer changed the tokens first (the store holds \(current.map { "\($0)" } ?? "?"))"
        case .corrupt: return "the token file \(file) is corrupt; it was moved to \(movedTo ?? "?")"
        case .foreign: return "the token file \(file) belongs to something else; it was moved to \(movedTo ?? "?")"
        case .tooLarge: return "the token file \(file) is larger than \(limit ?? 0) bytes; it was not read"
        case .refusedLocation: return why
        case .system: return "\(why) failed: \(String(cString: strerror(errno ?? 0)))"
        case .unavailable: return "token storage is unavailable: \(why)"
        case .closed: return "token storage takes no more writes: \(why)"
        case .unsealable: return "the stored tokens are sealed and cannot be opened here: \(why)"
        case .newerFormat: return "the stored tokens are in a newer format than this version reads: \(why)"
        default: return "token storage failed (\(code)): \(why)"
        }
    }
}
