/// The least a Redis user needs to run the token store, its save notifications and the V2 credential
/// store under one key prefix: its keys and channels only, and only the commands they send — scripts'
/// own calls included, since Redis checks those against the user too.
///
/// ```
/// ACL SETUSER entitle on >PASSWORD resetkeys ~entitle:* resetchannels &entitle:* -@all +hello +auth …
/// ```
/// (``rules(keyPrefix:)`` gives the whole rule list; a test runs the store as that user on a standalone
/// server and on a cluster.)
public enum RedisACL {
    /// The commands the store sends, and those its scripts call.
    public static let commands = [
        // Connecting: the handshake, a name, a database, liveness; a cluster's map and redirections.
        "hello", "auth", "client|setname", "select", "ping", "cluster|slots", "asking", "role",
        // Scripts (the save, the lock) and what they call.
        "eval", "evalsha", "script|load", "exists", "get", "set", "del", "hget", "hset", "incr", "pexpire", "pttl",
        "rename", "sadd", "time", "type",
        // Reads outside scripts, a replica's acknowledgement, the old layout's migration.
        "hmget", "smembers", "wait", "scan",
        // Save notifications: pub/sub on a server, sharded pub/sub on a cluster.
        "publish", "subscribe", "spublish", "ssubscribe",
    ]

    /// The rules of `ACL SETUSER` (after the user's name, `on` and its password) that allow the store
    /// under `keyPrefix` and nothing else.
    public static func rules(keyPrefix: String = "entitle") -> [String] {
        ["resetkeys", "~\(keyPrefix):*", "resetchannels", "&\(keyPrefix):*", "-@all"] + commands.map { "+" + $0 }
    }
}
