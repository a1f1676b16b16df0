/// The platform's signed statement that this device is signed in to an MVPD (Apple's VSA SAML
/// response). Opaque to the engine, which only forwards it to the backend for verification.
public struct PlatformAssertion: Sendable, Hashable, Codable {
    /// The MVPD the platform says the device is signed in to.
    public var mvpdID: String
    /// The serialized, signed assertion (a secret: it is a bearer credential).
    public var serialized: String

    /// Creates an assertion.
    public init(mvpdID: String, serialized: String) {
        self.mvpdID = mvpdID
        self.serialized = serialized
    }
}
