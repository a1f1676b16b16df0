/// The configuration region: is there a requestor, and may entitlement calls run?
package enum ConfigurationState: Sendable, Hashable {
    /// No `setRequestor` yet: waits for one; entitlement calls are queued.
    case unconfigured
    /// `setRequestor` sent: waits for the backend's configuration; entitlement calls are queued.
    /// `calls` are the `setRequestor` calls the coming `setRequestorComplete` answers.
    indirect case configuring(requestorID: String, operation: OperationID, calls: [CallID])
    /// Configuration loaded with nothing valid stored: signs in silently before
    /// `setRequestorComplete` — by reading the device's profiles when another requestor on the
    /// device holds an authentication (single sign-on), or by asking the platform's account and
    /// exchanging its assertion for a partner profile (`operation` is the step waited for);
    /// entitlement calls are queued.
    indirect case signingIn(RequestorConfiguration, operation: OperationID, calls: [CallID])
    /// Configured: entitlement calls run; waits for a new `setRequestor` (reconfiguration).
    case configured(RequestorConfiguration)
    /// The last `setRequestor` failed: calls fail at once until `retryAt`; the first call after it
    /// configures again (the call is held, as while configuring), as does a new `setRequestor`. The pause
    /// doubles with each failure in a row, from 1 s up to `ConfigurationState.longestRetryPause`.
    indirect case failed(requestorID: String, BackendError, retryAt: Timestamp)

    /// The configured requestor (nil unless ``configured(_:)``).
    var configuredRequestorID: String? {
        if case .configured(let configuration) = self { configuration.requestorID } else { nil }
    }

    /// The longest pause between a failed configuration and the next call's attempt to configure again.
    package static let longestRetryPause = Duration.seconds(60)

    /// The pause after `failures` configurations failed in a row (1 s, 2 s, 4 s, … at most ``longestRetryPause``).
    static func retryPause(afterFailures failures: Int) -> Duration {
        failures >= 7 ? longestRetryPause : min(.seconds(1 << max(0, failures - 1)), longestRetryPause)
    }
}
