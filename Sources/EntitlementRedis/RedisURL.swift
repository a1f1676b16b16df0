import EntitlementSupport

/// Why a Redis URL was refused. Its description names the part that is wrong, never the URL itself
/// (it may hold a password).
public struct RedisURLError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in words.
    public let description: String

    init(_ description: String) { self.description = description }
}

/// The parts of a `redis://` URL (``RedisConfiguration/init(url:connectTimeout:commandTimeout:connections:)``).
struct RedisURL: Equatable {
    var host: String
    var port: UInt16 = 6379
    var credentials: RedisCredentials?
    var database = 0

    /// The longest URL read (a configuration value, not a payload).
    static let maximumLength = 4096

    static func parse(_ text: String) throws(RedisURLError) -> RedisURL {
        guard text.utf8.count <= maximumLength else { throw RedisURLError("the Redis URL is longer than \(maximumLength) bytes") }
        let rest: Substring
        if text.hasPrefix("redis://") {
            rest = text.dropFirst("redis://".count)
        } else if text.hasPrefix("rediss://") {
            throw RedisURLError(
                "rediss:// (TLS) is reached through a local TLS tunnel (stunnel in client mode): give the tunnel's redis:// address")
        } else {
            throw RedisURLError("a Redis URL starts with redis://")
        }
        guard !rest.contains(where: { $0 == "?" || $0 == "#" }) else { throw RedisURLError("the Redis URL takes no query or fragment") }
        // The authority ends at the first "/" after the last "@" (so a password may hold "/" unencoded).
        let hostStart = rest.lastIndex(of: "@").map { rest.index(after: $0) } ?? rest.startIndex
        let authorityEnd = rest[hostStart...].firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[..<authorityEnd]
        let path = rest[authorityEnd...]
        var url = RedisURL(host: "")
        var hostPort = authority
        if let at = authority.lastIndex(of: "@") {
            let userInfo = authority[..<at]
            hostPort = authority[authority.index(after: at)...]
            guard let colon = userInfo.firstIndex(of: ":") else {
                throw RedisURLError("the Redis URL's credentials are user:password or :password")
            }
            let user = try decode(userInfo[..<colon], part: "user")
            let password = try decode(userInfo[userInfo.index(after: colon)...], part: "password")
            guard !password.isEmpty else { throw RedisURLError("the Redis URL's password is empty") }
            url.credentials = RedisCredentials(username: user.isEmpty ? nil : user, password: password)
        }
        if hostPort.hasPrefix("[") {
            guard let close = hostPort.firstIndex(of: "]") else { throw RedisURLError("the Redis URL's IPv6 host has no closing ]") }
            url.host = String(hostPort[hostPort.index(after: hostPort.startIndex)..<close])
            let after = hostPort[hostPort.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisURLError("the Redis URL has something after its IPv6 host") }
                url.port = try port(after.dropFirst())
            }
        } else if let colon = hostPort.lastIndex(of: ":") {
            url.host = String(hostPort[..<colon])
            // `h:6379:1` names a host `h:6379` on port 1: a host has one port, and an IPv6 host goes in [ ].
            guard !url.host.contains(":") else { throw RedisURLError("the Redis URL has more than one port (an IPv6 host goes in [ ])") }
            url.port = try port(hostPort[hostPort.index(after: colon)...])
        } else {
            url.host = String(hostPort)
        }
        guard !url.host.isEmpty else { throw RedisURLError("the Redis URL has no host") }
        guard url.host.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "%") && $0 != UInt8(ascii: "/") }) else {
            throw RedisURLError("the Redis URL's host holds a character a host name cannot")
        }
        if path.count > 1 {
            guard let database = Int(path.dropFirst()), (0...1_000_000).contains(database) else {
                throw RedisURLError("the Redis URL's path is a database number (/0, /1, …)")
            }
            url.database = database
        }
        return url
    }

    private static func port(_ text: Substring) throws(RedisURLError) -> UInt16 {
        guard !text.isEmpty, text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), let port = UInt16(text), port > 0
        else { throw RedisURLError("the Redis URL's port is a number from 1 to 65535") }
        return port
    }

    /// Percent-decodes one part (the user or the password), refusing a bad escape or bytes that are not UTF-8.
    private static func decode(_ text: Substring, part: String) throws(RedisURLError) -> String {
        do throws(PercentEncoding.DecodingError) {
            return try PercentEncoding.decode(text)
        } catch .badEscape {
            throw RedisURLError("the Redis URL's \(part) has a bad %-escape")
        } catch {
            throw RedisURLError("the Redis URL's \(part) is not UTF-8")
        }
    }

    /// `text` with every byte but unreserved ones percent-encoded (for a user name in a description).
    static func encode(_ text: String) -> String { PercentEncoding.encode(text) }
}
