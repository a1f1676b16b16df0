/// Who a provider answers for: the device, the requestor the engine was configured with, and the
/// session — which changes with every `setRequestor`, so a service can tell an old request from a new one.
public struct ProviderSession: Sendable, Hashable {
    /// The device's id.
    public var deviceID: String
    /// The requestor set by `setRequestor`.
    public var requestorID: String
    /// `DEVICE#N`: the device and the configuration it runs under (N grows with every `setRequestor`).
    public var sessionID: String
    /// The user token the engine holds for this provider (a secret), if the user signed in to it.
    public var userToken: String?
    /// The engine's number for this request, unique in the engine (0 for a verification at
    /// `setRequestor`): a provider may use it to tell requests apart, or a test to order answers.
    public var requestID: UInt64
    /// The transaction a step-up approved, sent with the one retry of the request (a secret, single use).
    public var transactionID: String?

    /// Creates a session.
    public init(
        deviceID: String, requestorID: String, sessionID: String, userToken: String? = nil, requestID: UInt64 = 0,
        transactionID: String? = nil
    ) {
        self.deviceID = deviceID
        self.requestorID = requestorID
        self.sessionID = sessionID
        self.userToken = userToken
        self.requestID = requestID
        self.transactionID = transactionID
    }

    /// The session of a configuration: its device, requestor and configuration operation.
    package static func of(deviceID: String, requestorID: String, configuration: OperationID, userToken: String? = nil) -> ProviderSession {
        ProviderSession(
            deviceID: deviceID, requestorID: requestorID, sessionID: "\(deviceID)#\(configuration.rawValue)", userToken: userToken)
    }
}
