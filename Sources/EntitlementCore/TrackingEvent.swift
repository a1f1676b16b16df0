/// The `sendTrackingData` event types (Adobe's iOS/tvOS SDK API reference).
public enum TrackingEvent: String, Sendable, Hashable, Codable {
    /// Any answer about authentication: data = success, MVPD, user GUID, cached, device type, client type, OS.
    case authenticationDetection
    /// Any authorization answer: data = success, MVPD, GUID, cached, error, details, device type, client type, OS.
    case authorizationDetection
    /// The user selected an MVPD: data = MVPD, device type, client type, OS.
    case mvpdSelection
}
