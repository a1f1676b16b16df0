/// The `sendTrackingData` event types (reference §3.4).
public enum TrackingEvent: String, Sendable, Hashable, Codable {
    /// Any answer about authentication: data = success, MVPD, user GUID, cached, device type, client type, OS.
    case authenticationDetection
    /// Any authorization answer: data = success, MVPD, GUID, cached, error, details, device type, client type, OS.
    case authorizationDetection
    /// The user selected an MVPD: data = MVPD, device type, client type, OS.
    case mvpdSelection
}
