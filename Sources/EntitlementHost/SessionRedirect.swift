import EntitlementEngine
import EntitlementSupport

/// One redirect URL per session, for a service whose login chain ends on an https page of its own:
/// the page's URL with the session sealed into its query (`https://tv.example.com/adobe/return?session=…`),
/// so the page — on whichever node the browser reaches — finds the session a returning browser
/// belongs to from the URL alone, and the engine refuses that URL for any other session (the query is
/// part of the redirect URL it checks).
///
/// The seal is deterministic (every node, and every engine the session has, makes the same URL for it)
/// and keyed: without the key the query says nothing of the device or requestor (device ids are
/// personal data, and browsers keep URLs), and a changed or made-up one opens to nothing. It is an
/// HMAC-SHA-256 synthetic-IV construction: the IV is the keyed hash of the session, the session is
/// XORed with a keystream of HMACs of the IV — one key for each, derived from yours. Give every node
/// the same key of 32 random bytes or more; a new key makes the logins waiting for their redirect under
/// the old one fail as a wrong URL (`REDIRECT_URL_MISMATCH`), so change it when few logins are open.
public struct SessionRedirect: Sendable {
    /// The return page, as given (an absolute `https` URL without query or fragment).
    public let page: String
    private let macKey: HMACSHA256.PreparedKey
    private let streamKey: HMACSHA256.PreparedKey

    /// The longest `session` value opened (a session's ids are short; anything longer is made up).
    static let longestHandle = 2048
    /// Bytes of the synthetic IV (of HMAC-SHA-256's 32).
    static let ivLength = 16

    /// A redirect for `page` under `key` (at least 32 bytes).
    /// - Throws: ``SessionRedirectError`` when the key is short or the page is not an absolute `https`
    ///   URL without query or fragment (`http` is taken for a loopback host, to test with).
    public init(page: String, key: [UInt8]) throws(SessionRedirectError) {
        guard key.count >= 32 else { throw SessionRedirectError("the key has \(key.count) bytes; give at least 32 random bytes") }
        let loopback = page.hasPrefix("http://127.0.0.1") || page.hasPrefix("http://localhost") || page.hasPrefix("http://[::1]")
        guard page.hasPrefix("https://") || loopback, !page.contains("?"), !page.contains("#"), page.count <= 1024,
            (try? ExternalURL.parse(page)) != nil
        else {
            throw SessionRedirectError("the page must be an absolute https URL without query or fragment")
        }
        self.page = page
        macKey = HMACSHA256.PreparedKey(HMACSHA256.authenticationCode(for: Array("entitle session redirect: iv".utf8), key: key))
        streamKey = HMACSHA256.PreparedKey(HMACSHA256.authenticationCode(for: Array("entitle session redirect: stream".utf8), key: key))
    }

    /// The redirect URL of `session`: the page and `?session=` with the sealed session.
    public func url(for session: SessionKey) -> String {
        let plain = Self.plain(session)
        let iv = Array(macKey.code(for: plain).prefix(Self.ivLength))
        return page + "?session=" + Base64URL.encode(iv + xor(plain, iv: iv))
    }

    /// The session's bytes as sealed: `device ␟ requestor` (U+001F between), or — for a device id holding
    /// U+001F itself, or starting with NUL — a NUL, the device id's length in four bytes (big-endian),
    /// the device id and the requestor id, so no two sessions share their bytes.
    package static func plain(_ session: SessionKey) -> [UInt8] {
        let device = Array(session.deviceID.utf8), requestor = Array(session.requestorID.utf8)
        guard device.contains(0x1F) || device.first == 0 else { return device + [0x1F] + requestor }
        let length = UInt32(truncatingIfNeeded: device.count)
        let prefix: [UInt8] = [0, UInt8(length >> 24), UInt8(truncatingIfNeeded: length >> 16), UInt8(truncatingIfNeeded: length >> 8), UInt8(truncatingIfNeeded: length)]
        return prefix + device + requestor
    }

    /// The session `plain` holds (either form of ``plain(_:)``), nil when it holds none.
    package static func session(in plain: [UInt8]) -> SessionKey? {
        if plain.first == 0 {
            guard plain.count >= 5 else { return nil }
            let length = plain[1...4].reduce(0) { $0 << 8 | Int($1) }
            guard length <= plain.count - 5 else { return nil }
            let device = plain[5..<(5 + length)], requestor = plain[(5 + length)...]
            return SessionKey(deviceID: String(decoding: device, as: UTF8.self), requestorID: String(decoding: requestor, as: UTF8.self))
        }
        guard let separator = plain.firstIndex(of: 0x1F) else { return nil }
        return SessionKey(
            deviceID: String(decoding: plain[..<separator], as: UTF8.self),
            requestorID: String(decoding: plain[plain.index(after: separator)...], as: UTF8.self))
    }

    /// The session a URL that reached the page belongs to: nil when it is not the page's, carries no
    /// `session`, or one this key did not seal (changed, made up, or under another key).
    public func session(returningTo url: String) -> SessionKey? {
        guard let parsed = try? ExternalURL.parse(url), parsed.base == page, let handle = parsed.parameters["session"],
            handle.utf8.count <= Self.longestHandle, let sealed = Base64URL.decode(handle), sealed.count > Self.ivLength
        else { return nil }
        let iv = Array(sealed.prefix(Self.ivLength))
        let plain = xor(Array(sealed.dropFirst(Self.ivLength)), iv: iv)
        guard HMACSHA256.equalInConstantTime(iv, Array(macKey.code(for: plain).prefix(Self.ivLength))) else { return nil }
        return Self.session(in: plain)
    }

    /// `bytes` XORed with the keystream of `iv`: HMAC(stream key, iv ‖ block number) for each 32 bytes.
    private func xor(_ bytes: [UInt8], iv: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var block: UInt32 = 0
        while out.count < bytes.count {
            let number = [UInt8(truncatingIfNeeded: block >> 24), UInt8(truncatingIfNeeded: block >> 16), UInt8(truncatingIfNeeded: block >> 8), UInt8(truncatingIfNeeded: block)]
            let stream = streamKey.code(for: iv + number)
            for (offset, byte) in stream.enumerated() where out.count < bytes.count {
                out.append(bytes[Int(block) * 32 + offset] ^ byte)
            }
            block &+= 1
        }
        return out
    }
}

/// Why a ``SessionRedirect`` could not be made.
public struct SessionRedirectError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What is wrong, in words (never the key).
    public let description: String

    init(_ description: String) { self.description = description }
}
