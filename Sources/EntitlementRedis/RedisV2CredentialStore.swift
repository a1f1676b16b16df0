import EntitlementEngine
import EntitlementSupport

/// Client credentials on Redis, shared by every node of a fleet: the software statement is registered
/// once for all of them. A node that finds no credentials (or finds the ones the service just rejected
/// with `invalid_client`) takes a lock (`SET … NX PX`) before it registers; the others wait, reading
/// the store, and use what it saved. A lock whose holder died expires after `lockTime` and the next
/// node takes it.
///
/// Keys, under `keyPrefix` (`entitle` by default), named by a hash of the software statement (which
/// never appears in a key): `PREFIX:v2-client:{HASH}` holds the credentials as the JSON V2 answered
/// registration with (the client secret in it is a secret: give the store a Redis only your fleet
/// reaches), `PREFIX:v2-client:{HASH}:registering` the lock. Neither expires: credentials are kept for
/// ever (registering again makes a new client, and the users' profiles belong to the old one).
///
/// Redis unreachable while credentials are needed is the request's failure (`BackendError.network`),
/// never a registration: a node that cannot read the store does not know that none is there.
public final class RedisV2CredentialStore: V2CredentialStore {
    /// The client the store talks through (a standalone server's or a cluster's).
    package let client: any RedisCommandSender
    /// The prefix of the store's keys.
    package let keyPrefix: String
    /// How long a registration may hold the lock before another node may take it (default 30 s).
    package let lockTime: Duration
    /// How long a node waits for another node's registration before it gives up (default 60 s).
    package let waitLimit: Duration
    /// The credentials key.
    package let key: String
    /// What seals the stored credentials (the client secret is a secret); nil: plain JSON.
    package let sealing: (any TokenSealing)?

    /// A store for `softwareStatement`'s credentials on `client`; with `sealing`, the value is sealed
    /// (`sealed:1:`…) and a plain one written before is still read.
    public init(
        client: any RedisCommandSender, softwareStatement: String, keyPrefix: String = "entitle", lockTime: Duration = .seconds(30),
        waitLimit: Duration = .seconds(60), sealing: (any TokenSealing)? = nil
    ) {
        self.client = client
        self.sealing = sealing
        self.keyPrefix = keyPrefix
        self.lockTime = max(lockTime, .milliseconds(100))
        self.waitLimit = max(waitLimit, .zero)
        key = keyPrefix + ":v2-client:{" + Hex.encode(Array(SHA256.hash(softwareStatement).prefix(16))) + "}"
    }

    private var lockKey: String { key + ":registering" }

    /// The stored credentials; nil when there are none, or when Redis cannot be read.
    public func load() async -> V2ClientCredentials? { try? await read() }

    /// Stores `credentials` (best effort: ``credentials(replacing:registering:)`` is the path that
    /// reports a failure).
    public func save(_ credentials: V2ClientCredentials) async { try? await write(credentials) }

    /// The stored credentials unless they are `rejected` or missing; else the credentials one node of
    /// the fleet registers (this one if it takes the lock first), stored for all.
    public func credentials(
        replacing rejected: V2ClientCredentials?, registering register: @Sendable () async throws(BackendError) -> V2ClientCredentials
    ) async throws(BackendError) -> V2ClientCredentials {
        let deadline = ContinuousClock.now + waitLimit
        let token = Hex.encode(SystemRandomSource().bytes(16))
        while true {
            if let stored = try await read(), stored != rejected { return stored }
            if try await lock(token) {
                do {
                    // Another node may have stored new credentials between the read and the lock.
                    if let stored = try await read(), stored != rejected {
                        await unlock(token)
                        return stored
                    }
                    let registered = try await register()
                    try await write(registered)
                    await unlock(token)
                    return registered
                } catch {
                    await unlock(token)
                    throw error
                }
            }
            guard ContinuousClock.now < deadline else {
                throw BackendError.network("another node has been registering the client for longer than \(waitLimit)")
            }
            do {
                try await Task.sleep(for: .milliseconds(100))
            } catch {
                throw BackendError.timeout
            }
        }
    }

    private func read() async throws(BackendError) -> V2ClientCredentials? {
        let answer: RESPValue
        do {
            answer = try await client.send(["GET", key], key: key)
        } catch {
            throw Self.unreachable(error)
        }
        guard case .bulkString(let bytes?) = answer else { return nil }
        return try V2StoredCredentials.decode(bytes, from: "the Redis key \(key)", sealing: sealing)
    }

    private func write(_ credentials: V2ClientCredentials) async throws(BackendError) {
        let text = String(decoding: try V2StoredCredentials.encode(credentials, sealing: sealing), as: UTF8.self)
        do {
            _ = try await client.send(["SET", key, text], key: key)
        } catch {
            throw Self.unreachable(error)
        }
    }

    /// Whether this node took the registration lock.
    private func lock(_ token: String) async throws(BackendError) -> Bool {
        do {
            let answer = try await client.send(["SET", lockKey, token, "NX", "PX", String(lockTime.milliseconds)], key: lockKey)
            return answer == .simpleString("OK")
        } catch {
            throw Self.unreachable(error)
        }
    }

    /// Releases the lock if this node still holds it (one script: a lock that expired and was taken by
    /// another node is left alone).
    private func unlock(_ token: String) async {
        _ = try? await client.send(
            ["EVAL", "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0", "1", lockKey, token],
            key: lockKey)
    }

    private static func unreachable(_ error: RedisError) -> BackendError {
        .network("the credential store on Redis: \(error)")
    }
}
