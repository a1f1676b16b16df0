/// A registration code the backend issued for a second-screen login.
public struct RegistrationCode: Sendable, Hashable, Codable {
    /// The code the user types on the second screen (a short-lived secret).
    public var code: String
    /// When it stops being usable.
    public var expires: Timestamp

    /// Creates a registration code.
    package init(code: String, expires: Timestamp) {
        self.code = code
        self.expires = expires
    }
}
