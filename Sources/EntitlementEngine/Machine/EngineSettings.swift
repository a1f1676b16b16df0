/// Engine settings chosen by the embedding app.
public struct EngineSettings: Sendable, Hashable {
    /// The custom URL that ends login and logout redirect chains, compared exactly
    /// (default `adobepass://ios.app`, the cookbook's `ADOBEPASS_REDIRECT_URL`).
    public var redirectURL: String
    /// How long a login or logout may wait for its redirect, clamped to 1…10 minutes (default 10).
    public var redirectTimeout: Duration
    /// How many calls may wait for `setRequestor` to complete; a call beyond it is refused (default 1,024).
    public var queueLimit: Int
    /// Device type for tracking data (`computer`, `tablet`, `mobile`, `gameconsole`, `unknown`).
    public var deviceType: String
    /// Client type for tracking data.
    public var clientType: String
    /// Operating system for tracking data.
    public var operatingSystem: String

    /// Creates settings; `redirectTimeout` is clamped to 60 s…600 s (security checklist A.5 #13).
    public init(
        redirectURL: String = "adobepass://ios.app", redirectTimeout: Duration = .seconds(600), queueLimit: Int = 1024,
        deviceType: String = "computer", clientType: String = "swift", operatingSystem: String = "Linux"
    ) {
        self.redirectURL = redirectURL
        self.redirectTimeout = min(max(redirectTimeout, .seconds(60)), .seconds(600))
        self.queueLimit = max(0, queueLimit)
        self.deviceType = deviceType
        self.clientType = clientType
        self.operatingSystem = operatingSystem
    }
}
