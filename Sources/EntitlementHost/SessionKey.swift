import EntitlementEngine

/// One device session in a ``SessionHost``: the device and the requestor (the app or channel) it runs for.
public struct SessionKey: Hashable, Sendable, CustomStringConvertible {
    /// The device's id (the engine's `EngineEnvironment.deviceID`).
    public var deviceID: String
    /// The requestor the session is configured for (`setRequestor`).
    public var requestorID: String

    /// Creates a key.
    public init(deviceID: String, requestorID: String) {
        self.deviceID = deviceID
        self.requestorID = requestorID
    }

    /// `requestor/device`, the device named by its pseudonym (`DevicePseudonym`): logs and metrics
    /// that show a key never show a device id.
    public var description: String { requestorID + "/" + DevicePseudonym.of(deviceID) }
}
