import EntitlementEngine

/// What ``RedisTokenStorage/migrateLegacyKeys()`` did.
public struct RedisLegacyMigration: Sendable, Hashable {
    /// Tokens keys moved to the current layout, with their version and expiry.
    public var moved = 0
    /// Legacy keys dropped because the current layout already held the device and requestor (a node
    /// saved there first: its data is newer).
    public var superseded = 0
    /// Legacy keys dropped because they held nothing worth keeping, or no device id to place them by.
    public var dropped = 0
}

extension RedisTokenStorage {
    /// Moves a store written before 0.4.0 (`PREFIX:tokens:HASH`, `PREFIX:device:HASH`, one
    /// `PREFIX:versions` counter) to the current layout (every key of a device in its slot), on a
    /// standalone server: each tokens key is renamed (its version and expiry kept) unless the current
    /// layout already holds that device and requestor, the device's set and counter follow, and the
    /// legacy device sets and counter are deleted at the end. Run it once, from one node, when the new
    /// version is deployed; running it again finds nothing to move. Nodes may serve meanwhile: a save
    /// they make first wins over the legacy key.
    public func migrateLegacyKeys() async throws(TokenStorageError) -> RedisLegacyMigration {
        var report = RedisLegacyMigration()
        let legacyTokens = keyPrefix + ":tokens:"
        for key in try await scan(legacyTokens + "*") where key.utf8.count == legacyTokens.utf8.count + 32 {
            let stored = try Self.versioned(try await send(["HMGET", key, "v", "t"], key: key), sealing: sealing)
            guard stored.version != .absent else { continue }  // expired meanwhile
            guard let deviceID = stored.tokens.deviceID,
                let requestorID = try await legacyRequestor(of: key, deviceID: deviceID)
            else {
                _ = try await send(["DEL", key], key: key)
                report.dropped += 1
                continue
            }
            let answer = try await send([
                "EVAL", Self.migrationScript, "5", key, tokensKey(deviceID: deviceID, requestorID: requestorID),
                deviceKey(deviceID: deviceID), versionsKey(deviceID: deviceID), keyPrefix + ":versions", requestorID,
            ], key: nil)
            if case .integer(1) = answer { report.moved += 1 } else { report.superseded += 1 }
        }
        for key in try await scan(keyPrefix + ":device:*") { _ = try await send(["DEL", key], key: key) }
        _ = try await send(["DEL", keyPrefix + ":versions"], key: nil)
        return report
    }

    /// The requestor whose legacy tokens key is `key`: the one of the device's legacy set that hashes to it.
    private func legacyRequestor(of key: String, deviceID: String) async throws(TokenStorageError) -> String? {
        let members = try await send(["SMEMBERS", keyPrefix + ":device:" + Self.deviceHash(deviceID)], key: nil)
        guard case .array(let items?) = members else { throw Self.unexpected(members) }
        let suffix = key.split(separator: ":").last.map(String.init)
        return items.compactMap(\.text).first { Self.pairHash(deviceID: deviceID, requestorID: $0) == suffix }
    }

    /// Every key matching `pattern` (`SCAN`, a few hundred at a time).
    private func scan(_ pattern: String) async throws(TokenStorageError) -> [String] {
        var keys: [String] = []
        var cursor = "0"
        repeat {
            let answer = try await send(["SCAN", cursor, "MATCH", pattern, "COUNT", "500"], key: nil)
            guard case .array(let parts?) = answer, parts.count == 2, let next = parts[0].text, case .array(let found?) = parts[1] else {
                throw Self.unexpected(answer)
            }
            keys += found.compactMap(\.text)
            cursor = next
        } while cursor != "0"
        return keys
    }

    /// KEYS: the legacy tokens key, the current tokens key, the device set, the device's counter, the
    /// legacy counter; ARGV: the requestor. Answers 1 (moved) or 0 (the current layout held it first).
    /// As the save script does, it checks what it reads before its first write, and hands Redis times it
    /// read back as whole numbers no longer than `longestLifetime` (Lua's numbers hold no more exactly).
    static let migrationScript = """
        if redis.call('EXISTS', KEYS[2]) == 1 then
            redis.call('DEL', KEYS[1])
            return 0
        end
        local deviceType = redis.call('TYPE', KEYS[3])['ok']
        if deviceType ~= 'none' and deviceType ~= 'set' then
            return redis.error_reply('WRONGTYPE the device set holds another kind of value')
        end
        local legacy = tonumber(redis.call('GET', KEYS[5]) or '0')
        local current = tonumber(redis.call('GET', KEYS[4]) or '0')
        if not legacy or not current then return redis.error_reply('ERR a version counter is not a number') end
        local longest = 9007199254740991
        local ttl = math.min(redis.call('PTTL', KEYS[1]), longest)
        redis.call('RENAME', KEYS[1], KEYS[2])
        redis.call('SADD', KEYS[3], ARGV[1])
        local left = redis.call('PTTL', KEYS[3])
        if ttl > 0 and (left < 0 or left < ttl) then redis.call('PEXPIRE', KEYS[3], string.format('%.0f', ttl)) end
        if legacy > current then redis.call('SET', KEYS[4], string.format('%.0f', legacy)) end
        local keep = math.min(redis.call('PTTL', KEYS[3]), longest)
        if keep > 0 then redis.call('PEXPIRE', KEYS[4], string.format('%.0f', keep)) end
        return 1
        """
}
