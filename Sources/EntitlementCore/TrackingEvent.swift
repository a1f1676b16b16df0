/// The `sendTrackingData` event types (Adobe's iOS/tvOS SDK API reference).
public enum TrackingEvent: String, Sendable, Hashable, Codable {
    /// Any answer about authentication: data = success, MVPD, user GUID, cached, device type, client type, OS.
    case authenticationDetection
    /// Any authorization answer: data = success, MVPD, GUID, cached, error, details, device type, client type, OS.
    case authorizationDetection
    /// The user selected an MVPD: data = MVPD, device type, client type, OS.
    case mvpdSelection

    /// Where the user's GUID (a hash of the user id: personal data) sits in this event's data, if it
    /// carries one.
    package var userGUIDField: Int? { self == .mvpdSelection ? nil : 2 }
}
