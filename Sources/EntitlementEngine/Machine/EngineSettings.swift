/// Engine settings chosen by the embedding app.
public struct EngineSettings: Sendable, Hashable {
    /// The custom URL that ends login and logout redirect chains, compared exactly
    /// (default `adobepass://ios.app`, the cookbook's `ADOBEPASS_REDIRECT_URL`).
    public var redirectURL: String
    /// How long a login or logout may wait for its redirect, clamped to 1…10 minutes (default 10).
    public var redirectTimeout: Duration
    /// How long one backend request may take before it fails with ``BackendError/timeout``, clamped
    /// to 1 s…10 minutes (default 30 s): a backend that never answers cannot hold a flow for ever.
    public var requestTimeout: Duration
    /// How many calls may wait for `setRequestor` to complete; a call beyond it is refused (default 1,024).
    public var queueLimit: Int
    /// How long before its expiry a token already counts as expired: covers clock skew between this
    /// engine and the backend (clamped to 0…5 minutes, default 60 s, as AppAuth refreshes early).
    public var expiryLeeway: Duration
    /// How many resources one `checkPreauthorizedResources` may ask about (P100 beyond it; default 5).
    public var preauthorizationLimit: Int
    /// How long a pre-authorization decision is reused when `cache` is true (default 5 minutes).
    public var preauthorizationCacheLifetime: Duration
    /// Device type for tracking data (`computer`, `tablet`, `mobile`, `gameconsole`, `unknown`).
    public var deviceType: String
    /// Client type for tracking data.
    public var clientType: String
    /// Operating system for tracking data.
    public var operatingSystem: String
    /// Whether the device has a platform TV-provider account to sign in with (cookbook D).
    /// ``AccessEnabler`` sets it from its `platform:` argument (true exactly when a ``PlatformSSO``
    /// port is given) and the replayer from the trace; set it yourself only to drive the bare machine.
    public var platformSSO = false
    /// Set on a device that logs in on a second screen (tvOS, cookbook E); nil (the default) logs
    /// in through the web view's redirect (cookbook C).
    public var secondScreen: SecondScreen?

    /// Creates settings; `redirectTimeout` is clamped to 60 s…600 s (security checklist A.5 #13).
    public init(
        redirectURL: String = "adobepass://ios.app", redirectTimeout: Duration = .seconds(600), queueLimit: Int = 1024,
        expiryLeeway: Duration = .seconds(60), preauthorizationLimit: Int = 5,
        preauthorizationCacheLifetime: Duration = .seconds(300), deviceType: String = "computer",
        clientType: String = "swift", operatingSystem: String = "Linux", requestTimeout: Duration = .seconds(30)
    ) {
        self.redirectURL = redirectURL
        self.redirectTimeout = min(max(redirectTimeout, .seconds(60)), .seconds(600))
        self.queueLimit = max(0, queueLimit)
        self.requestTimeout = min(max(requestTimeout, .seconds(1)), .seconds(600))
        self.expiryLeeway = min(max(expiryLeeway, .zero), .seconds(300))
        self.preauthorizationLimit = max(1, preauthorizationLimit)
        self.preauthorizationCacheLifetime = max(preauthorizationCacheLifetime, .zero)
        self.deviceType = deviceType
        self.clientType = clientType
        self.operatingSystem = operatingSystem
    }
}
