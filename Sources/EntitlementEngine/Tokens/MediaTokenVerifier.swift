import EntitlementSupport

/// Verifies a short-lived media token before playback starts (cookbook F.3): the backend calls it
/// with the token from `setToken`, the resource about to play and its requestor id.
///
/// Token format: `base64url(payload).base64url(HMAC-SHA256(key, payload))`, where the payload is
/// the canonical JSON `{"guid","id","issued","mvpd","requestor","resource","ttl"}` (times in integer
/// milliseconds; `id` is the issuer's nonce, so no two tokens are alike). The signature is compared
/// in constant time.
public struct MediaTokenVerifier: Sendable {
    /// The verdict, named after Adobe's verifier results.
    public enum Verdict: String, Error, Sendable, Hashable {
        /// The token is authentic, unexpired, and for this resource and requestor.
        case valid = "VALID_TOKEN"
        /// The token is not `payload.signature` with a readable payload.
        case invalidFormat = "INVALID_TOKEN_FORMAT"
        /// The signature does not match the payload under the key.
        case invalidSignature = "INVALID_SIGNATURE"
        /// The token's lifetime is over (or it was issued in the future, beyond the leeway).
        case expired = "TOKEN_EXPIRED"
        /// The token is for another resource.
        case wrongResource = "INVALID_RESOURCE_ID"
        /// The token is for another requestor.
        case wrongRequestor = "INVALID_REQUESTOR_ID"
    }

    /// What a valid token says.
    public struct Claims: Sendable, Hashable {
        /// The token's own id (a nonce): two tokens never share it.
        public var tokenID: String
        /// An anonymised, signed user id (usable to limit concurrent streams).
        public var sessionGUID: String
        /// The requestor the token was issued for.
        public var requestorID: String
        /// The resource it unlocks.
        public var resourceID: String
        /// When it was issued.
        public var issued: Timestamp
        /// How long it lives, in milliseconds.
        public var timeToLive: Int64
        /// The MVPD that authorized it.
        public var mvpdID: String

        /// Creates claims.
        package init(
            tokenID: String, sessionGUID: String, requestorID: String, resourceID: String, issued: Timestamp,
            timeToLive: Int64, mvpdID: String
        ) {
            self.tokenID = tokenID
            self.sessionGUID = sessionGUID
            self.requestorID = requestorID
            self.resourceID = resourceID
            self.issued = issued
            self.timeToLive = timeToLive
            self.mvpdID = mvpdID
        }
    }

    private let key: [UInt8]
    private let clock: any EngineClock
    /// Clock skew tolerated between the issuer and this verifier.
    public let leeway: Duration
    /// The key made ready for HMAC once, not per token.
    private let preparedKey: HMACSHA256.PreparedKey

    /// Creates a verifier for tokens signed with `key`, checking expiry on `clock`.
    public init(key: [UInt8], clock: any EngineClock, leeway: Duration = .seconds(30)) {
        self.key = key
        self.preparedKey = HMACSHA256.PreparedKey(key)
        self.clock = clock
        self.leeway = leeway
    }

    /// The verdict for `token`. A nil `resource` checks only authenticity, requestor and lifetime.
    public func verify(_ token: String, resource: String?, requestor: String) -> Verdict {
        switch claims(token) {
        case .failure(let verdict): return verdict
        case .success(let claims):
            guard claims.requestorID == requestor else { return .wrongRequestor }
            let now = clock.now().milliseconds, slack = leeway.milliseconds
            let notBefore = Saturating.subtract(claims.issued.milliseconds, slack)
            let notAfter = Saturating.add(Saturating.add(claims.issued.milliseconds, claims.timeToLive), slack)
            guard notBefore <= now, now < notAfter else {
                return .expired
            }
            if let resource, resource != claims.resourceID { return .wrongResource }
            return .valid
        }
    }

    /// The token's claims if it is well formed and authentic.
    public func claims(_ token: String) -> Result<Claims, Verdict> {
        var token = token
        return token.withUTF8 { claims(bytes: $0) }
    }

    /// ``claims(_:)`` on the token's UTF-8 bytes: split, decoded and read without forming Characters.
    private func claims(bytes token: UnsafeBufferPointer<UInt8>) -> Result<Claims, Verdict> {
        guard let dot = token.firstIndex(of: UInt8(ascii: ".")),
            let payload = Base64URL.decode(bytes: UnsafeBufferPointer(rebasing: token[..<dot])),
            let signature = Base64URL.decode(bytes: UnsafeBufferPointer(rebasing: token[(dot + 1)...]))
        else { return .failure(.invalidFormat) }
        // Seven members, each one of the seven claims, none given twice.
        var id: String?, guid: String?, requestor: String?, resource: String?, mvpd: String?
        var issued: Int64?, ttl: Int64?
        let readable = JSONReader.visitMembers(payload) { key, value in
            func take<Value>(_ claim: inout Value?, _ read: Value?) -> Bool {
                guard claim == nil, let read else { return false }
                claim = read
                return true
            }
            if Self.key(key, is: "id") { return take(&id, value.string) }
            if Self.key(key, is: "guid") { return take(&guid, value.string) }
            if Self.key(key, is: "requestor") { return take(&requestor, value.string) }
            if Self.key(key, is: "resource") { return take(&resource, value.string) }
            if Self.key(key, is: "mvpd") { return take(&mvpd, value.string) }
            if Self.key(key, is: "issued") { return take(&issued, value.int) }
            if Self.key(key, is: "ttl") { return take(&ttl, value.int) }
            return false
        }
        guard readable, let id, let guid, let requestor, let resource, let issued, let ttl, ttl > 0, let mvpd
        else { return .failure(.invalidFormat) }
        guard preparedKey.isValid(signature, for: payload) else { return .failure(.invalidSignature) }
        return .success(
            Claims(
                tokenID: id, sessionGUID: guid, requestorID: requestor, resourceID: resource, issued: Timestamp(milliseconds: issued),
                timeToLive: ttl, mvpdID: mvpd))
    }

    /// Whether a member's key is `name` (ASCII), byte for byte.
    private static func key(_ key: UnsafeBufferPointer<UInt8>, is name: StaticString) -> Bool {
        guard key.count == name.utf8CodeUnitCount else { return false }
        let expected = name.utf8Start
        for offset in 0..<key.count where key[offset] != expected[offset] { return false }
        return true
    }

    /// Signs a token (what an issuer — the simulator, or a test — does).
    package static func sign(_ claims: Claims, key: [UInt8]) -> String {
        let payload: JSONValue = [
            "id": .string(claims.tokenID), "guid": .string(claims.sessionGUID), "requestor": .string(claims.requestorID),
            "resource": .string(claims.resourceID), "issued": .int(claims.issued.milliseconds),
            "ttl": .int(claims.timeToLive), "mvpd": .string(claims.mvpdID),
        ]
        let bytes = payload.canonicalBytes
        return Base64URL.encode(bytes) + "." + Base64URL.encode(HMACSHA256.authenticationCode(for: bytes, key: key))
    }
}
