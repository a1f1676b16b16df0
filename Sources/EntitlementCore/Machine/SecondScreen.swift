/// Settings of a device that logs in on a second screen (tvOS, cookbook E): after the provider is
/// chosen, the engine shows a registration code (`status(REGCODE)`) and polls until the user has
/// signed in with it on another device. Both settings are clamped when created and whenever set.
public struct SecondScreen: Sendable, Hashable {
    /// How often the engine asks whether the code was used (default 5 s; clamped 1 s…60 s;
    /// Adobe recommends every 3–5 s).
    public var pollInterval: Duration { didSet { pollInterval = Self.clampPollInterval(pollInterval) } }
    /// How long the engine shows a registration code and polls for it (default 30 minutes; clamped
    /// 1 minute…10 hours); never past the session's `notAfter`.
    public var codeLifetime: Duration { didSet { codeLifetime = Self.clampCodeLifetime(codeLifetime) } }

    /// Creates second-screen settings.
    public init(pollInterval: Duration = .seconds(5), codeLifetime: Duration = .seconds(1800)) {
        self.pollInterval = Self.clampPollInterval(pollInterval)
        self.codeLifetime = Self.clampCodeLifetime(codeLifetime)
    }

    static func clampPollInterval(_ value: Duration) -> Duration { min(max(value, .seconds(1)), .seconds(60)) }
    static func clampCodeLifetime(_ value: Duration) -> Duration { min(max(value, .seconds(60)), .seconds(36_000)) }
}
