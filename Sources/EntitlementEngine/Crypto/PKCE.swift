/// Proof Key for Code Exchange (RFC 7636) with the `S256` method only; `plain` is never used.
public enum PKCE {
    /// The `code_challenge_method` the engine always sends.
    public static let method = "S256"

    /// The verifier text for 32 random bytes: 43 base64url characters (RFC 7636 §4.1).
    public static func verifier(from randomBytes: [UInt8]) -> String { Base64URL.encode(randomBytes) }

    /// `BASE64URL(SHA256(ASCII(verifier)))` (RFC 7636 §4.2).
    public static func challenge(for verifier: String) -> String { Base64URL.encode(SHA256.hash(verifier)) }
}
