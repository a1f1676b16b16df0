import EntitlementEngine

#if canImport(FoundationNetworking)
    import Foundation
#else
    import Foundation
#endif

/// Client credentials in a file, kept for ever (registering again makes a new client and loses the
/// users' profiles, Adobe's *REST API V2 Checklist*): the JSON V2 answered registration with
/// (`client_id`, `client_secret`, `client_id_issued_at`, …) in a versioned envelope
/// (`{"credentials":{…},"format":1}`; a bare answer, as files before the envelope hold, reads too),
/// written to a temporary file of its own with owner-only permissions (the client secret is a secret)
/// and renamed over the old one, so a reader — in this process or another — sees the old file or the
/// new one, never half of one. A file this version cannot read (another format, damaged) is refused
/// with a clear error (`clientCredentials`), never taken for none: the client registers only when
/// there is no file. Use one file per software statement; processes that share it should register
/// once before they start (`entitle register`), since two that register at the same moment make two
/// clients (the last one written is kept).
public final class FileV2CredentialStore: V2CredentialStore {
    /// The file's path.
    package let path: String
    /// What seals the file (the client secret is a secret); nil: plain JSON.
    package let sealing: (any TokenSealing)?

    /// A store at `path` (its directory must exist); with `sealing`, the file is sealed
    /// (`sealed:1:`…), and a plain one written before is still read.
    public init(path: String, sealing: (any TokenSealing)? = nil) {
        self.path = path
        self.sealing = sealing
    }

    /// The stored credentials, if the file holds ones this version reads.
    public func load() async -> V2ClientCredentials? { try? read() }

    /// Keeps `credentials`: a temporary file of this writer's own with mode 0600, renamed over the old one.
    public func save(_ credentials: V2ClientCredentials) async { try? write(credentials) }

    /// The stored credentials unless `rejected`; registers only when there is no file (one it cannot
    /// read is refused, not replaced). New credentials that cannot be written are a failure, not kept
    /// in memory only: the next start would register yet another client.
    public func credentials(
        replacing rejected: V2ClientCredentials?, registering register: @Sendable () async throws(BackendError) -> V2ClientCredentials
    ) async throws(BackendError) -> V2ClientCredentials {
        if let stored = try read(), stored != rejected { return stored }
        let registered = try await register()
        try write(registered)
        return registered
    }

    /// Writes `credentials` to a temporary file of this writer's own (mode 0600) and renames it over the old one.
    private func write(_ credentials: V2ClientCredentials) throws(BackendError) {
        let bytes = Data(try V2StoredCredentials.encode(credentials, sealing: sealing))
        let temporary = path + ".\(getpid()).\(UInt64.random(in: 0...UInt64.max)).tmp"
        guard FileManager.default.createFile(atPath: temporary, contents: bytes, attributes: [.posixPermissions: 0o600]) else {
            throw .clientCredentials("the credentials file \(path) could not be written")
        }
        guard rename(temporary, path) == 0 else {
            try? FileManager.default.removeItem(atPath: temporary)
            throw .clientCredentials("the credentials file \(path) could not be written")
        }
    }

    /// The file's credentials; nil when there is no file.
    private func read() throws(BackendError) -> V2ClientCredentials? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        return try V2StoredCredentials.decode(Array(data), from: "the credentials file \(path)", sealing: sealing)
    }
}
