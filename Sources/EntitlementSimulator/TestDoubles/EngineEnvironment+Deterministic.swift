import EntitlementEngine

extension EngineEnvironment {
    /// Tests, scenarios and the demo: a manual clock and seeded sources, the same every run.
    public static func deterministic(clock: ManualClock, deviceID: String = "device-1", seed: UInt64 = 1)
        -> EngineEnvironment
    {
        EngineEnvironment(clock: clock, deviceID: deviceID, redirectStateRandom: SeededRandomSource(seed: seed &* 2 &+ 1))
    }
}
