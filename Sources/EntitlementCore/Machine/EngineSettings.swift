import EntitlementV2

/// Engine settings chosen by the embedding app.
public struct EngineSettings: Sendable, Hashable {
    /// The custom URL that ends login and logout redirect chains, compared exactly
    /// (default `adobepass://ios.app`, the cookbook's `ADOBEPASS_REDIRECT_URL`).
    public var redirectURL: String
    /// The app's originating domain, sent as `domainName` when a session is created (Adobe's *Create
    /// authentication session*: a first screen sends it with the MVPD and the redirect URL). No default: set
    /// it to your app's domain. Without it the engine sends none, and a service that needs it answers with
    /// missing parameters, which ends the login naming `domainName` (`LOGIN_FAILED`).
    public var domainName: String?
    /// How long a login or logout may wait for its redirect, clamped to 1…10 minutes (default 10).
    public var redirectTimeout: Duration { didSet { redirectTimeout = Self.clampRedirectTimeout(redirectTimeout) } }
    /// How long one backend request may take before it fails with ``BackendError/timeout``, clamped
    /// to 1 s…10 minutes (default 30 s): a backend that never answers cannot hold a flow for ever.
    public var requestTimeout: Duration { didSet { requestTimeout = Self.clampRequestTimeout(requestTimeout) } }
    /// How many calls may wait for `setRequestor` to complete; a call beyond it is refused
    /// (default 1,024; clamped to 1…100,000).
    public var queueLimit: Int { didSet { queueLimit = Self.clampQueueLimit(queueLimit) } }
    /// How long before its expiry a token already counts as expired: covers clock skew between this
    /// engine and the backend (clamped to 0…5 minutes, default 60 s, as AppAuth refreshes early).
    public var expiryLeeway: Duration { didSet { expiryLeeway = Self.clampExpiryLeeway(expiryLeeway) } }
    /// How many resources one `checkPreauthorizedResources` may ask about (P100 beyond it; default 5;
    /// clamped to 1…1,000).
    public var preauthorizationLimit: Int {
        didSet { preauthorizationLimit = Self.clampPreauthorizationLimit(preauthorizationLimit) }
    }
    /// How long a pre-authorization decision is reused when `cache` is true (default 5 minutes;
    /// clamped to 0…24 hours).
    public var preauthorizationCacheLifetime: Duration {
        didSet { preauthorizationCacheLifetime = Self.clampCacheLifetime(preauthorizationCacheLifetime) }
    }
    /// The device's type in tracking data (`computer`, `tablet`, `mobile`, `gameconsole`, `unknown`;
    /// default `unknown`). It describes the device the engine serves, not the server it runs on:
    /// ``describingDevice(_:)`` sets it, with ``clientType`` and ``operatingSystem``, from the device's
    /// `X-Device-Info`.
    public var deviceType: String
    /// The device's client type in tracking data (Adobe's: `flash`, `html5`, `ios`, `android`; default `unknown`).
    public var clientType: String
    /// The device's operating system in tracking data (default `unknown`).
    public var operatingSystem: String
    /// Whether the device has a platform TV-provider account to sign in with (cookbook D).
    /// `AccessEnabler` sets it from its `platform:` argument (true exactly when a `PlatformSSO`
    /// port is given) and the replayer from the trace; set it yourself only to drive the bare machine.
    public var platformSSO = false
    /// Set on a device that logs in on a second screen (tvOS, cookbook E); nil (the default) logs
    /// in through the web view's redirect (cookbook C).
    public var secondScreen: SecondScreen?
    /// The provider chain's links, in order (`ProviderChain`); empty (the default) is the TV
    /// provider alone, as Adobe's SDK has it, with no chain and no `entitlementsChanged`.
    /// `AccessEnabler` sets it from its `providers:` argument and the replayer from the trace; set it
    /// yourself only to drive the bare machine.
    public var providers: [ProviderLink] = []
    /// The resources whose policy advice is passed to the app for a step-up (nil, the default: none —
    /// advice is then a `STEP_UP_REQUIRED` failure).
    public var stepUp: StepUpSettings?
    /// How long a save that failed for a passing reason (`TokenStorageError.isTransient`: the store
    /// unreachable, restarting, busy) is tried again before it counts as failed: pauses of 50 ms,
    /// doubling up to 1 s, in real time (the store is a real server), while the engine's other inputs
    /// wait their turn; zero tries once. Clamped to 0…60 s; default 5 s (a Redis restart or failover).
    public var storageRetryWindow: Duration = .seconds(5) {
        didSet { storageRetryWindow = min(max(storageRetryWindow, .zero), .seconds(60)) }
    }

    /// Creates settings. Every bounded setting is clamped to its documented range here and whenever
    /// it is set later; `redirectTimeout` to 60 s…600 s (item 13 of the redirect checklist in the
    /// article *Redirect security*).
    public init(
        redirectURL: String = "adobepass://ios.app", redirectTimeout: Duration = .seconds(600), queueLimit: Int = 1024,
        expiryLeeway: Duration = .seconds(60), preauthorizationLimit: Int = 5,
        preauthorizationCacheLifetime: Duration = .seconds(300), deviceType: String = "unknown",
        clientType: String = "unknown", operatingSystem: String = "unknown", requestTimeout: Duration = .seconds(30),
        domainName: String? = nil
    ) {
        self.redirectURL = redirectURL
        self.domainName = domainName
        self.redirectTimeout = Self.clampRedirectTimeout(redirectTimeout)
        self.queueLimit = Self.clampQueueLimit(queueLimit)
        self.requestTimeout = Self.clampRequestTimeout(requestTimeout)
        self.expiryLeeway = Self.clampExpiryLeeway(expiryLeeway)
        self.preauthorizationLimit = Self.clampPreauthorizationLimit(preauthorizationLimit)
        self.preauthorizationCacheLifetime = Self.clampCacheLifetime(preauthorizationCacheLifetime)
        self.deviceType = deviceType
        self.clientType = clientType
        self.operatingSystem = operatingSystem
    }

    // MARK: - The device in tracking data

    /// These settings with the tracking fields describing `device` (what its `X-Device-Info` says), in
    /// Adobe's tracking vocabulary: the device type from its hardware type (`MobilePhone` → `mobile`,
    /// `Tablet` and `eReader` → `tablet`, `GamesConsole` → `gameconsole`, `Desktop` → `computer`, any
    /// other → `unknown`), the client type from its operating system (Apple's → `ios`, Android and
    /// Fire OS → `android`, any other → `unknown`), and the operating system's name.
    public func describingDevice(_ device: V2DeviceInfo) -> EngineSettings {
        var settings = self
        settings.deviceType =
            switch device.primaryHardwareType {
            case "MobilePhone": "mobile"
            case "Tablet", "eReader": "tablet"
            case "GamesConsole": "gameconsole"
            case "Desktop": "computer"
            default: "unknown"
            }
        let system = device.osName.lowercased()
        settings.clientType =
            if ["ios", "ipados", "tvos", "watchos", "visionos"].contains(where: system.hasPrefix) {
                "ios"
            } else if system.hasPrefix("android") || system.hasPrefix("fire") {
                "android"
            } else {
                "unknown"
            }
        settings.operatingSystem = device.osName.isEmpty ? "unknown" : device.osName
        return settings
    }

    // MARK: - Ranges

    static func clampRedirectTimeout(_ value: Duration) -> Duration { min(max(value, .seconds(60)), .seconds(600)) }
    static func clampRequestTimeout(_ value: Duration) -> Duration { min(max(value, .seconds(1)), .seconds(600)) }
    static func clampQueueLimit(_ value: Int) -> Int { min(max(value, 1), 100_000) }
    static func clampExpiryLeeway(_ value: Duration) -> Duration { min(max(value, .zero), .seconds(300)) }
    static func clampPreauthorizationLimit(_ value: Int) -> Int { min(max(value, 1), 1_000) }
    static func clampCacheLifetime(_ value: Duration) -> Duration { min(max(value, .zero), .seconds(86_400)) }
}
