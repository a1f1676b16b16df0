/// The callback protocol, under the cookbook's names. Every method has a default no-op, so an
/// app implements only what it uses.
///
/// The engine calls these in order, from its own actor (never the main actor), one at a time.
/// A delegate that calls back into the engine from inside a callback is queued: the call runs
/// after the current step finishes, never re-entrantly.
public protocol AccessEnablerDelegate: AnyObject, Sendable {
    /// `setRequestor` finished: `success` true, or false when the configuration failed.
    func setRequestorComplete(_ success: Bool)
    /// Show a provider picker with `mvpds`; answer with `setSelectedProvider(id)` or `setSelectedProvider(nil)`.
    func displayProviderDialog(_ mvpds: [MVPD])
    /// The authentication status: 1 with `""`, or 0 with an ``ErrorCode``.
    func setAuthenticationStatus(_ status: Int, errorCode: String)
    /// Open `url` (login or logout) in a web view; pass the final custom-scheme URL to `handleExternalURL`.
    func navigateToUrl(_ url: String)
    /// Tracking data for `event`.
    func sendTrackingData(_ data: [String], forEventType event: TrackingEvent)
    /// A fresh short-lived media token for `resource`.
    func setToken(_ token: String, forResource resource: String)
    /// Authorization for `resource` failed with `errorCode` (authentication, authorization or other).
    func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String)
    /// The selected provider, or nil.
    func selectedProvider(_ mvpd: MVPD?)
    /// The answer to `getMetadata(key)`.
    func setMetadataStatus(_ metadata: MetadataValue?, encrypted: Bool, forKey key: MetadataKey)
    /// The pre-authorized subset of the requested resources, in the caller's order.
    func preauthorizedResources(_ resources: [String])
    /// Present the platform provider picker (platform SSO).
    func presentTvProviderDialog(_ dialog: TvProviderDialog)
    /// Dismiss the platform provider picker (platform SSO).
    func dismissTvProviderDialog(_ dialog: TvProviderDialog)
    /// Advanced status: refusals, configuration errors, notices.
    func status(_ report: StatusReport)
    /// What the user may access changed with these links of the provider chain (``ProviderChain``):
    /// refresh lock decorations, for example with `checkPreauthorizedResources`.
    func entitlementsChanged(_ providers: [String])
    /// Answers `signIn` and `signOut`: signed in to `provider` or not, with a failure's code and message,
    /// or the provider's message for the user.
    func providerSignInStatus(_ provider: String, signedIn: Bool, errorCode: String, message: String)
    /// Before `resource` is granted the user must step up (``StepUpAdvice``); answer with
    /// `completeStepUp(_:succeeded:)`.
    func stepUpRequired(_ resource: String, advice: StepUpAdvice)
    /// Every callback goes through here first, with the ids of the calls it answers (none for a step
    /// such as `navigateToUrl`). The default calls the named method (``deliver(_:)``); a delegate that
    /// needs the call ids (a session host, a bridge) implements this one instead.
    func callbackEmitted(_ callback: Callback, answering calls: [CallID])
}

extension AccessEnablerDelegate {
    /// Does nothing.
    public func setRequestorComplete(_ success: Bool) {}
    /// Does nothing.
    public func displayProviderDialog(_ mvpds: [MVPD]) {}
    /// Does nothing.
    public func setAuthenticationStatus(_ status: Int, errorCode: String) {}
    /// Does nothing.
    public func navigateToUrl(_ url: String) {}
    /// Does nothing.
    public func sendTrackingData(_ data: [String], forEventType event: TrackingEvent) {}
    /// Does nothing.
    public func setToken(_ token: String, forResource resource: String) {}
    /// Does nothing.
    public func tokenRequestFailed(_ resource: String, errorCode: String, errorDescription: String) {}
    /// Does nothing.
    public func selectedProvider(_ mvpd: MVPD?) {}
    /// Does nothing.
    public func setMetadataStatus(_ metadata: MetadataValue?, encrypted: Bool, forKey key: MetadataKey) {}
    /// Does nothing.
    public func preauthorizedResources(_ resources: [String]) {}
    /// Does nothing.
    public func presentTvProviderDialog(_ dialog: TvProviderDialog) {}
    /// Does nothing.
    public func dismissTvProviderDialog(_ dialog: TvProviderDialog) {}
    /// Does nothing.
    public func status(_ report: StatusReport) {}
    /// Does nothing.
    public func entitlementsChanged(_ providers: [String]) {}
    /// Does nothing.
    public func providerSignInStatus(_ provider: String, signedIn: Bool, errorCode: String, message: String) {}
    /// Does nothing.
    public func stepUpRequired(_ resource: String, advice: StepUpAdvice) {}
    /// Calls the named method that matches `callback`.
    public func callbackEmitted(_ callback: Callback, answering calls: [CallID]) { deliver(callback) }

    /// Calls the delegate method that matches `callback`.
    public func deliver(_ callback: Callback) {
        switch callback {
        case .setRequestorComplete(let success): setRequestorComplete(success)
        case .displayProviderDialog(let mvpds): displayProviderDialog(mvpds)
        case .setAuthenticationStatus(let status, let code): setAuthenticationStatus(status, errorCode: code)
        case .navigateToUrl(let url): navigateToUrl(url)
        case .sendTrackingData(let event, let data): sendTrackingData(data, forEventType: event)
        case .setToken(let token, let resource): setToken(token, forResource: resource)
        case .tokenRequestFailed(let resource, let code, let description):
            tokenRequestFailed(resource, errorCode: code, errorDescription: description)
        case .selectedProvider(let mvpd): selectedProvider(mvpd)
        case .setMetadataStatus(let value, let encrypted, let key): setMetadataStatus(value, encrypted: encrypted, forKey: key)
        case .preauthorizedResources(let resources): preauthorizedResources(resources)
        case .presentTvProviderDialog(let dialog): presentTvProviderDialog(dialog)
        case .dismissTvProviderDialog(let dialog): dismissTvProviderDialog(dialog)
        case .status(let report): status(report)
        case .entitlementsChanged(let providers): entitlementsChanged(providers)
        case .providerSignInStatus(let provider, let signedIn, let code, let message):
            providerSignInStatus(provider, signedIn: signedIn, errorCode: code, message: message)
        case .stepUpRequired(let resource, let advice): stepUpRequired(resource, advice: advice)
        }
    }
}
