/// The configuration region: is there a requestor, and may entitlement calls run?
public enum ConfigurationState: Sendable, Hashable {
    /// No `setRequestor` yet: waits for one; entitlement calls are queued.
    case unconfigured
    /// `setRequestor` sent: waits for the backend's configuration; entitlement calls are queued.
    /// `calls` are the `setRequestor` calls the coming `setRequestorComplete` answers.
    case configuring(requestorID: String, operation: OperationID, calls: [CallID])
    /// Configuration loaded with nothing valid stored, on a device whose platform account may be
    /// signed in to one of the requestor's MVPDs: waits for the platform's answer and then the
    /// backend's exchange of its assertion, silently, before `setRequestorComplete` (`operation` is
    /// the step waited for); entitlement calls are queued.
    case signingIn(RequestorConfiguration, operation: OperationID, calls: [CallID])
    /// Configured: entitlement calls run; waits for a new `setRequestor` (reconfiguration).
    case configured(RequestorConfiguration)
    /// The last `setRequestor` failed: calls fail at once; waits for a new `setRequestor`.
    case failed(requestorID: String, BackendError)
}
