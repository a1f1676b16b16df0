import EntitlementEngine
import EntitlementSupport
import Foundation
import Synchronization

/// Token storage on Redis, for a fleet of backend nodes that share device sessions: any node may
/// take a device's next request. It keeps the `TokenStorage` contract — a versioned
/// compare-and-set, so two nodes never overwrite each other's update — with one Lua script per save
/// (Redis runs a script atomically), and a failure of Redis is a typed `TokenStorageError`, never a
/// lost call.
///
/// Key layout, under `keyPrefix` (`entitle` by default); ids are hashed, so no device or
/// requestor id appears in a key name. Every key of a device carries the device's hash as its hash tag
/// (`{…}`), so a save touches one Redis Cluster slot, and no key is shared by all devices:
///
/// | key | type | holds |
/// |---|---|---|
/// | `PREFIX:{HASH(device)}:tokens:HASH(device, requestor)` | hash | `v`: the version, `t`: the tokens as JSON (with `sealing`, sealed: `sealed:1:` and base64), `s`: the schema of the JSON (`schema`) |
/// | `PREFIX:{HASH(device)}:device` | set | the requestor ids with tokens on the device (single sign-on) |
/// | `PREFIX:{HASH(device)}:versions` | string | the device's counter every save increments: versions are never reused, even after a key expired |
///
/// Stores written before 0.4.0 (`PREFIX:tokens:…`, `PREFIX:device:…`, one `PREFIX:versions`) are
/// moved to this layout by ``migrateLegacyKeys()``, once, on a standalone server.
///
/// A tokens key expires with what it holds: at the latest of the authentication's expiry and the
/// pending login's deadline (at least a minute after the save), or `rememberFor` after the save when
/// it holds only the chosen provider (or nothing). Lifetimes are sent relative (`PEXPIRE`), measured
/// on the engine's clock, so a node's clock and Redis's need not agree, and never longer than
/// `longestLifetime` (an expiry read from the wire may be any number). The device set lives as long
/// as its longest tokens key.
///
/// Every save also publishes its tokens key (in the same script) — on `PREFIX:saves` on a standalone
/// server; on a cluster with sharded pub/sub (`SPUBLISH`, Redis 7) on its slot's channel
/// `PREFIX:saves:{TAG}` (`savesChannel(slot:)`), which only the master holding the key serves, and
/// which a node subscribes to on every master (its cluster subscriber follows failovers and
/// moved slots) — so the nodes of a fleet learn of each other's saves at once (`TokenSaveNotifying`: a session host subscribes for its
/// engines). A node maps a published key back to the device and requestor only for ids it has used
/// itself (the last `knownKeysLimit`); a message it cannot map, or misses while Redis is away, costs
/// nothing: engines still check the stored version before every input.
public final class RedisTokenStorage: TokenSaveNotifying {
    /// The client the store talks through.
    package let client: any RedisCommandSender
    /// The prefix of every key.
    package let keyPrefix: String
    /// How long tokens with nothing that expires (only a remembered provider) are kept.
    package let rememberFor: Duration
    /// How long a save waits for a replica to acknowledge it (`WAIT 1`), or nil for not at all. It costs a
    /// replication round trip per save; without it a failover may lose saves acknowledged just before. A
    /// save no connected replica acknowledged in time fails (`TokenStorageError.unavailable`): it may be
    /// held by the master alone, so it is not reported as saved; on a master with no replica connected
    /// it stands (there is nothing to wait for). A
    /// cluster master the slot map shows with no healthy replica (after a failover, until the old master
    /// rejoins as its replica) is not waited on: a wait there would acknowledge nothing and hold the
    /// connection; its saves are held by that master alone. A `WAIT` that finds no replica, and a map
    /// older than ``replicaRecheckInterval`` that shows none, make the client read the map again.
    package let replicaAcknowledgement: Duration?
    private let now: @Sendable () -> Timestamp
    /// What seals the tokens before they reach Redis and opens them after (nil: they are stored as plain
    /// JSON). Every node that shares the store needs the same.
    package let sealing: (any TokenSealing)?
    /// The schema of the tokens' JSON this version writes (field `s` beside them) and reads up to. A key
    /// without `s` was written by 0.4.0, in schema 1. A change to `StoredTokens`' JSON that an older
    /// node could misread raises it.
    package static let schema = 1
    /// The most tokens keys mapped back to their ids for save notifications (the map starts over past it).
    package static let knownKeysLimit = 200_000
    private let knownKeys = Mutex<[String: (deviceID: String, requestorID: String)]>([:])
    /// How old the cluster's slot map may be when it says a master has no replica (saves there skip
    /// `WAIT`); an older map is read again.
    package static let replicaRecheckInterval = Duration.seconds(5)
    /// The save script's digest once the server has loaded it (`SCRIPT LOAD`).
    private let saveScriptDigest = Mutex<String?>(nil)
    private let observers = Mutex<(next: UInt64, handlers: [UInt64: @Sendable (String, String) -> Void], stopSubscribing: (@Sendable () -> Void)?)>(
        (0, [:], nil))

    /// A store on `client`; `now` is the clock that dates `rememberFor` (the system clock by default).
    /// `replicaAcknowledgement`: nil (the default) waits 500 ms on a cluster (``RedisClusterClient``,
    /// whose masters have replicas) and not at all on a standalone server; `.zero` never waits.
    /// `sealing` seals the tokens at rest (`TokenSealing`).
    public init(
        client: any RedisCommandSender, keyPrefix: String = "entitle", rememberFor: Duration = .seconds(30 * 86_400),
        replicaAcknowledgement: Duration? = nil, now: @escaping @Sendable () -> Timestamp = { SystemClock().now() },
        sealing: (any TokenSealing)? = nil
    ) {
        self.client = client
        self.sealing = sealing
        self.keyPrefix = keyPrefix
        self.rememberFor = rememberFor
        switch replicaAcknowledgement {
        case nil: self.replicaAcknowledgement = client is RedisClusterClient ? .milliseconds(500) : nil
        case .zero?: self.replicaAcknowledgement = nil
        case let wait?: self.replicaAcknowledgement = wait
        }
        self.now = now
    }

    /// `PREFIX:{HASH(device)}:tokens:…` for `deviceID` and `requestorID`.
    package func tokensKey(deviceID: String, requestorID: String) -> String {
        Self.tokensKey(devicePrefix(deviceID), deviceID: deviceID, requestorID: requestorID)
    }

    /// The tokens key under the device's key prefix.
    static func tokensKey(_ devicePrefix: String, deviceID: String, requestorID: String) -> String {
        devicePrefix + ":tokens:" + pairHash(deviceID: deviceID, requestorID: requestorID)
    }

    /// `PREFIX:{HASH(device)}`: what every key of the device starts with (its hash tag: one slot).
    func devicePrefix(_ deviceID: String) -> String { keyPrefix + ":{" + Self.deviceHash(deviceID) + "}" }

    /// The device's hash in key names.
    static func deviceHash(_ deviceID: String) -> String { Hex.encode(Array(SHA256.hash(deviceID).prefix(16))) }

    /// The device and requestor's hash in key names.
    static func pairHash(deviceID: String, requestorID: String) -> String {
        Hex.encode(Array(SHA256.hash(deviceID + "\u{1F}" + requestorID).prefix(16)))
    }

    /// `PREFIX:{HASH(device)}:versions`: the device's version counter.
    package func versionsKey(deviceID: String) -> String { Self.versionsKey(devicePrefix(deviceID)) }

    static func versionsKey(_ devicePrefix: String) -> String { devicePrefix + ":versions" }

    /// The channel every save is published on (`PUBLISH`), on a standalone server.
    package var savesChannel: String { keyPrefix + ":saves" }

    /// The sharded channel a save in `slot` is published on (`SPUBLISH`), on a cluster:
    /// `PREFIX:saves:{TAG}`, where the tag puts the channel in that slot, beside the keys it announces.
    package func savesChannel(slot: Int) -> String { Self.savesChannel(prefix: keyPrefix, slot: slot) }

    static func savesChannel(prefix: String, slot: Int) -> String { prefix + ":saves:{" + RedisKeySlot.tag(for: slot) + "}" }

    /// Where a save of the device whose keys start with `devicePrefix` is announced: the publishing
    /// command and its channel.
    private func announcement(devicePrefix: String) -> (command: String, channel: String) {
        guard client is RedisClusterClient else { return ("PUBLISH", savesChannel) }
        return ("SPUBLISH", savesChannel(slot: RedisKeySlot.of(devicePrefix)))
    }

    /// `tokensKey`, remembered for mapping save notifications back to the ids (only while someone observes).
    private func knownTokensKey(deviceID: String, requestorID: String) -> String {
        remember(tokensKey(deviceID: deviceID, requestorID: requestorID), deviceID: deviceID, requestorID: requestorID)
    }

    /// `key` (a tokens key), remembered as `deviceID` and `requestorID`'s while someone observes saves.
    private func remember(_ key: String, deviceID: String, requestorID: String) -> String {
        guard observers.withLock({ !$0.handlers.isEmpty }) else { return key }
        knownKeys.withLock { known in
            if known[key] == nil, known.count >= Self.knownKeysLimit { known.removeAll() }
            known[key] = (deviceID, requestorID)
        }
        return key
    }

    // MARK: - Save notifications

    /// Calls `handler` with the device and requestor of every save any node makes from now on (for ids
    /// this node has used), on the subscriber's thread, until the observation is cancelled.
    public func observeSaves(_ handler: @escaping @Sendable (_ deviceID: String, _ requestorID: String) -> Void) -> SaveObservation {
        let id = observers.withLock { observers -> UInt64 in
            observers.next += 1
            observers.handlers[observers.next] = handler
            if observers.stopSubscribing == nil { observers.stopSubscribing = subscribeToSaves() }
            return observers.next
        }
        return SaveObservation { [weak self] in
            self?.observers.withLock { observers in
                observers.handlers[id] = nil
                if observers.handlers.isEmpty {
                    observers.stopSubscribing?()
                    observers.stopSubscribing = nil
                }
            }
        }
    }

    deinit { observers.withLock { $0.stopSubscribing?() } }

    /// Subscribes to every save's notification: ``savesChannel`` on a standalone server; on a cluster,
    /// each slot's channel (`savesChannel(slot:)`) on the master serving it. Returns how to stop.
    private func subscribeToSaves() -> @Sendable () -> Void {
        let onMessage: @Sendable (String) -> Void = { [weak self] key in self?.saved(key) }
        if let cluster = client as? RedisClusterClient {
            let prefix = keyPrefix
            let subscriber = RedisClusterSubscriber(cluster: cluster, channel: { Self.savesChannel(prefix: prefix, slot: $0) }, onMessage: onMessage)
            return { subscriber.stop() }
        }
        let subscriber = RedisSubscriber(
            configuration: client.configuration, commands: [["SUBSCRIBE", savesChannel]], reconnects: true, metrics: client.metrics,
            onMessage: onMessage)
        return { subscriber.stop() }
    }

    private func saved(_ key: String) {
        guard let ids = knownKeys.withLock({ $0[key] }) else { return }
        for handler in observers.withLock({ Array($0.handlers.values) }) { handler(ids.deviceID, ids.requestorID) }
    }

    /// `PREFIX:{HASH(device)}:device` for `deviceID`.
    package func deviceKey(deviceID: String) -> String { Self.deviceKey(devicePrefix(deviceID)) }

    static func deviceKey(_ devicePrefix: String) -> String { devicePrefix + ":device" }

    // MARK: - TokenStorage

    /// The tokens and version stored for `deviceID` and `requestorID` (one `HMGET`).
    public func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
        try await Self.toItsEnd { [self] () async throws(TokenStorageError) in
            let key = knownTokensKey(deviceID: deviceID, requestorID: requestorID)
            let answer = try await send(["HMGET", key, "v", "t", "s"], key: key)
            return try Self.versioned(answer, sealing: sealing)
        }
    }

    /// Saves `tokens` if the store still holds `expected` (one script, atomic); the new version, or
    /// `conflict` with the current one.
    public func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        try await Self.toItsEnd { [self] () async throws(TokenStorageError) in
            try await compareAndSet(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        }
    }

    private func compareAndSet(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
        async throws(TokenStorageError) -> StorageVersion
    {
        let json: String
        do {
            json = String(decoding: try SealedValue.stored(Array(try JSONEncoder().encode(tokens)), sealing: sealing), as: UTF8.self)
        } catch let error as TokenStorageError {
            throw error
        } catch {
            throw .unavailable("the tokens could not be encoded")
        }
        // Every key of the save from one hash of the device (they share its prefix and slot).
        let prefix = devicePrefix(deviceID)
        let tokensKey = remember(Self.tokensKey(prefix, deviceID: deviceID, requestorID: requestorID), deviceID: deviceID, requestorID: requestorID)
        let announcement = announcement(devicePrefix: prefix)
        let answer = try await runSaveScript([
            "3", tokensKey, Self.deviceKey(prefix), Self.versionsKey(prefix), String(expected.number), json, String(lifetime(of: tokens)),
            requestorID, announcement.channel, announcement.command, String(Self.schema),
        ])
        // The script answers {1|0, version}; versions are strings (HGET's, or tostring of INCR's).
        guard case .array(let parts?) = answer, parts.count == 2, case .integer(let saved) = parts[0],
            let number = parts[1].text.flatMap(UInt64.init)
        else { throw Self.unexpected(answer) }
        if saved == 1 { return StorageVersion(number) }
        throw .conflict(current: StorageVersion(number))
    }

    /// The current version (one `HGET`: cheaper than a load).
    public func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
        try await Self.toItsEnd { [self] () async throws(TokenStorageError) in
            let key = knownTokensKey(deviceID: deviceID, requestorID: requestorID)
            let answer = try await send(["HGET", key, "v"], key: key)
            if case .bulkString(nil) = answer { return .absent }
            guard let number = answer.text.flatMap(UInt64.init) else { throw Self.unexpected(answer) }
            return StorageVersion(number)
        }
    }

    /// Every authentication stored on the device, by any requestor (the device set, then one pipeline).
    public func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        try await Self.toItsEnd { [self] () async throws(TokenStorageError) in try await storedAuthentications(deviceID: deviceID) }
    }

    private func storedAuthentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
        let device = deviceKey(deviceID: deviceID)
        let members = try await send(["SMEMBERS", device], key: device)
        guard case .array(let items?) = members else { throw Self.unexpected(members) }
        let requestors = items.compactMap(\.text).sorted()
        guard !requestors.isEmpty else { return [] }
        let answers = try await pipeline(requestors.map { ["HMGET", tokensKey(deviceID: deviceID, requestorID: $0), "v", "t", "s"] }, key: device)
        var found: [AuthenticationToken] = []
        for answer in answers {
            if let authentication = try Self.versioned(answer, sealing: sealing).tokens.authentication { found.append(authentication) }
        }
        return found
    }

    // MARK: - Internals

    /// Runs one store operation to its end on a task of its own. The engine counts on a load or a
    /// compare-and-set it started (``TokenStorage``), and it runs them on the task of whichever caller
    /// carries its step: that task's cancellation must not abandon a command half-way (the client gives
    /// up a cancelled task's command). The client's command timeout bounds the operation.
    private static func toItsEnd<Value: Sendable>(
        _ operation: @escaping @Sendable () async throws(TokenStorageError) -> Value
    ) async throws(TokenStorageError) -> Value {
        let result = await Task { () async -> Result<Value, TokenStorageError> in
            do throws(TokenStorageError) {
                return .success(try await operation())
            } catch {
                return .failure(error)
            }
        }.value
        return try result.get()
    }

    /// Compare-and-set in one atomic step. KEYS (one slot: the device's): tokens, device set, the
    /// device's version counter. ARGV: the expected version, the tokens' JSON, the lifetime (ms), the
    /// requestor id, the channel and how to publish on it (`PUBLISH`, or `SPUBLISH` on a cluster, whose
    /// channel is in the device's slot), the schema of the JSON. Answers `{1, new version}` or `{0, current version}`.
    ///
    /// A version is the counter's next value, but never below the server's clock in microseconds: a
    /// server restarted empty (or from an older snapshot, or a replica that had not caught up) starts its
    /// counter again, and a number an engine still holds must never come back — it would let that engine
    /// skip reading data it never saw and save over it (found by `entitle fleet`). Versions stay below
    /// 2^53, so Lua's numbers hold them exactly, and so do lifetimes (`longestLifetime`). Every
    /// argument and every key's type is checked before the first write, so a save happens whole or not at
    /// all: a lifetime that is not a whole number of milliseconds from 1 to 2^53 − 1, an announcement other
    /// than `PUBLISH` or `SPUBLISH`, a version counter at 2^53 or not a number, a key of another type —
    /// each is refused with an error and nothing written.
    package static let saveScript = """
        local life = ARGV[3]
        if #life > 16 or not string.match(life, '^[1-9][0-9]*$') or tonumber(life) > 9007199254740991 then
            return redis.error_reply('ERR the lifetime is not a whole number of milliseconds from 1 to 2^53 - 1')
        end
        if ARGV[6] ~= 'PUBLISH' and ARGV[6] ~= 'SPUBLISH' then
            return redis.error_reply('ERR a save is announced with PUBLISH or SPUBLISH')
        end
        local tokensType = redis.call('TYPE', KEYS[1])['ok']
        local deviceType = redis.call('TYPE', KEYS[2])['ok']
        if (tokensType ~= 'none' and tokensType ~= 'hash') or (deviceType ~= 'none' and deviceType ~= 'set') then
            return redis.error_reply('WRONGTYPE a key of the save holds another kind of value')
        end
        local counter = tonumber(redis.call('GET', KEYS[3]) or '0')
        if not counter or counter >= 9007199254740991 then
            return redis.error_reply('ERR the version counter is not a number below 2^53 - 1')
        end
        local current = redis.call('HGET', KEYS[1], 'v') or '0'
        if current ~= ARGV[1] then return {0, current} end
        local now = redis.call('TIME')
        local floor = tonumber(now[1]) * 1000000 + tonumber(now[2])
        local next = redis.call('INCR', KEYS[3])
        if next < floor then
            redis.call('SET', KEYS[3], string.format('%.0f', floor))
            next = floor
        end
        local version = string.format('%.0f', next)
        redis.call('HSET', KEYS[1], 'v', version, 't', ARGV[2], 's', ARGV[7])
        redis.call('PEXPIRE', KEYS[1], ARGV[3])
        redis.call('SADD', KEYS[2], ARGV[4])
        local left = redis.call('PTTL', KEYS[2])
        if left < 0 or left < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
        local keep = redis.call('PTTL', KEYS[2])
        if keep > 9007199254740991 then keep = 9007199254740991 end
        if keep > 0 then redis.call('PEXPIRE', KEYS[3], string.format('%.0f', keep)) end
        redis.call(ARGV[6], ARGV[5], KEYS[1])
        return {1, version}
        """

    /// How long (ms) a save of `tokens` is kept: until the latest thing in it expires (the authentication,
    /// a pending login — one another node is completing stands past its deadline while its profile is read,
    /// so it is kept ``completingLoginKept`` longer — a logout or second-screen code), at least a
    /// minute; `rememberFor` when nothing in it expires — and at least that long when it holds a
    /// provider account (a user token and credentials kept for good do not expire with a login).
    /// How long past its deadline a login marked `completing` is kept: longer than
    /// `EntitlementMachine.completingGrace` (5 minutes with the default request timeout).
    static let completingLoginKept = Duration.seconds(900)

    func lifetime(of tokens: StoredTokens) -> Int64 {
        let remembered = max(rememberFor.milliseconds, 60_000)
        let login = tokens.pendingLogin.map { $0.completing ? $0.deadline.adding(Self.completingLoginKept) : $0.deadline }
        let dates = [
            tokens.authentication?.expires, login, tokens.pendingLogout?.deadline, tokens.pendingRegistration?.expires,
        ].compactMap { $0 }
        guard let latest = dates.max() else { return remembered }
        let (left, overflow) = latest.milliseconds.subtractingReportingOverflow(now().milliseconds)
        let expiring = overflow ? Self.longestLifetime : min(max(left, 60_000), Self.longestLifetime)
        return min(tokens.providerAccounts.isEmpty ? expiring : max(expiring, remembered), Self.longestLifetime)
    }

    /// The longest a key is kept (ms): 2^53 − 1, about 285,000 years, the most the save script's numbers
    /// hold exactly. Something that expires later (an expiry read from the wire may be any number) is kept
    /// that long.
    package static let longestLifetime: Int64 = (1 << 53) - 1

    /// Runs ``saveScript`` by its digest (`EVALSHA`; the digest from one `SCRIPT LOAD`), and whole
    /// (`EVAL`, which also teaches it to that server) where the server does not know it (`NOSCRIPT`:
    /// restarted, flushed, failed over, or another node of a cluster): the script is not sent with
    /// every save.
    ///
    /// With ``replicaAcknowledgement``, `WAIT 1 ms` follows on the same connection, so a save returns once
    /// a replica holds it and a failover right after does not lose it (see ``replicaAcknowledgement``
    /// for a master with no replica online).
    private func runSaveScript(_ keysAndArguments: [String]) async throws(TokenStorageError) -> RESPValue {
        let key = keysAndArguments[1]  // after the key count: the tokens key (every key is in its slot)
        let digest: String
        if let known = saveScriptDigest.withLock({ $0 }) {
            digest = known
        } else {
            let loaded = try await send(["SCRIPT", "LOAD", Self.saveScript], key: key)
            guard let text = loaded.text else { throw Self.unexpected(loaded) }
            saveScriptDigest.withLock { $0 = text }
            digest = text
        }
        let answer = try await acknowledged(["EVALSHA", digest] + keysAndArguments, key: key)
        if case .error(let message) = answer, message.hasPrefix("NOSCRIPT") {
            return try await acknowledged(["EVAL", Self.saveScript] + keysAndArguments, key: key)
        }
        return answer
    }

    /// `command`'s answer (an error answer as it is), followed by `WAIT` when replicas must acknowledge
    /// — except on a cluster master the slot map shows without a healthy replica: there a wait would
    /// cost the whole time, hold every command queued behind it on the connection, and keep nothing safer.
    private func acknowledged(_ command: [String], key: String) async throws(TokenStorageError) -> RESPValue {
        guard let within = replicaAcknowledgement, awaitsReplica(key: key) else {
            do throws(RedisError) {
                return try await client.send(command, key: key)
            } catch where error.code == .server && error.message.hasPrefix("NOSCRIPT") {
                return .error(error.message)
            } catch {
                throw Self.storageError(error)
            }
        }
        let answers = try await pipeline([command, ["WAIT", "1", String(max(within.milliseconds, 1))]], key: key)
        guard answers.count == 2 else { throw Self.unexpected(.array(answers)) }
        if case .error(let message) = answers[0], !message.hasPrefix("NOSCRIPT") { throw Self.storageError(.answer(message)) }
        guard case .integer(let replicas) = answers[1], replicas >= 1 else {
            (client as? RedisClusterClient)?.refreshSoon()  // has the replica gone?
            // No replica acknowledged. A master with no replica connected (it died, or a failover left this
            // master alone) holds its saves alone, as a master known to have none does: the save stands. A
            // replica that is connected and lags could lose it in a failover now: not acknowledged (the
            // engine counts the step as not taken; a later load finds the save if it survives).
            if await connectedReplicas(key: key) == 0 { return answers[0] }
            throw .unavailable("Redis: no replica acknowledged the save within \(within)")
        }
        return answers[0]
    }

    /// How many replicas the master serving `key` has connected (`ROLE`); nil when it cannot say.
    private func connectedReplicas(key: String) async -> Int? {
        guard case .array(let role?)? = try? await client.send(["ROLE"], key: key), role.count >= 3, role[0].text == "master",
            case .array(let replicas?) = role[2]
        else { return nil }
        return replicas.count
    }

    /// Whether a save of `key` waits for a replica: always on a standalone server (when configured); on
    /// a cluster, when the map read at most ``replicaRecheckInterval`` ago shows the slot's master with a
    /// healthy replica (an older map is read again meanwhile, to see a replica that came back).
    private func awaitsReplica(key: String) -> Bool {
        guard let cluster = client as? RedisClusterClient, let known = cluster.masterHasReplica(forKey: key) else { return true }
        if known.age > Self.replicaRecheckInterval { cluster.refreshSoon() }
        return known.hasReplica
    }

    /// `command`, touching `key` (nil: any node), with a Redis failure as the storage contract's error.
    func send(_ command: [String], key: String?) async throws(TokenStorageError) -> RESPValue {
        do {
            return try await client.send(command, key: key)
        } catch {
            throw Self.storageError(error)
        }
    }

    func pipeline(_ commands: [[String]], key: String) async throws(TokenStorageError) -> [RESPValue] {
        do {
            return try await client.pipeline(commands, key: key)
        } catch {
            throw Self.storageError(error)
        }
    }

    /// A Redis failure as the storage contract's error (`unavailable`): the engine reports it and
    /// counts nothing as saved.
    static func storageError(_ error: RedisError) -> TokenStorageError {
        .unavailable("Redis: \(error)")
    }

    /// An answer of the wrong shape, described by its shape only (an answer may hold tokens).
    static func unexpected(_ answer: RESPValue) -> TokenStorageError {
        let shape: String
        switch answer {
        case .simpleString: shape = "a status"
        case .error: shape = "an error"
        case .integer: shape = "a number"
        case .bulkString: shape = "a string"
        case .array(let items): shape = "an array of \(items?.count ?? 0)"
        }
        return .unavailable("Redis: an unexpected answer (\(shape))")
    }

    /// `HMGET v t [s]` as versioned tokens; a key that is gone is absent. Tokens in a schema newer than
    /// `schema` (written by a newer version of the package) are not guessed at: a typed error says so.
    static func versioned(_ answer: RESPValue, sealing: (any TokenSealing)?) throws(TokenStorageError) -> VersionedTokens {
        guard case .array(let fields?) = answer, fields.count == 2 || fields.count == 3 else { throw unexpected(answer) }
        if case .bulkString(nil) = fields[0] { return .absent }
        if fields.count == 3, case .bulkString(_?) = fields[2] {
            guard let written = fields[2].text.flatMap(Int.init), written >= 1 else { throw unexpected(answer) }
            guard written <= schema else {
                throw .newerFormat("Redis: these tokens were written in schema \(written) by a newer version; this node reads up to \(schema)")
            }
        }
        guard let number = fields[0].text.flatMap(UInt64.init), case .bulkString(let bytes?) = fields[1] else {
            throw unexpected(answer)
        }
        let plain = try SealedValue.plain(bytes, sealing: sealing)
        guard let tokens = try? JSONDecoder().decode(StoredTokens.self, from: Data(plain)) else {
            throw .unavailable("Redis: the stored tokens are not readable")
        }
        return VersionedTokens(tokens, version: StorageVersion(number))
    }
}
