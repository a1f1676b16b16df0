/// Everything nondeterministic the engine needs, injected: the clock, the device identity and one
/// random source per purpose.
public struct EngineEnvironment: Sendable {
    /// The clock that stamps inputs and runs timers.
    public var clock: any EngineClock
    /// This device's id, sent with every backend request and bound into every token.
    public var deviceID: String
    /// Draws the 256-bit redirect `state` of each login and logout flow.
    public var redirectStateRandom: any RandomSource

    /// Creates an environment from its parts.
    public init(clock: any EngineClock, deviceID: String, redirectStateRandom: any RandomSource) {
        self.clock = clock
        self.deviceID = deviceID
        self.redirectStateRandom = redirectStateRandom
    }

    /// Production: wall clock and the system CSPRNG.
    public static func live(deviceID: String) -> EngineEnvironment {
        EngineEnvironment(clock: SystemClock(), deviceID: deviceID, redirectStateRandom: SystemRandomSource())
    }
}
