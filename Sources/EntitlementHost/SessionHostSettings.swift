import EntitlementEngine

/// How a ``SessionHost`` keeps its sessions.
public struct SessionHostSettings: Sendable {
    /// A session at rest that has had no call for this long leaves memory (it rests as a value and
    /// comes back on its next call). Sweeps run every ``idleTimeout`` on the host's clock.
    public var idleTimeout: Duration
    /// At most this many engines stay resident: past it, the least recently used engines at rest are
    /// put to rest first. Engines with work pending (a login waiting for its redirect, a request in
    /// flight) stay resident until it ends, so the count can pass the limit for a while.
    public var residentLimit: Int
    /// The most calls one session may have waiting or running at once; a call beyond it is refused
    /// with `SessionHostError/mailboxFull(_:limit:)` and never reaches the engine.
    public var mailboxLimit: Int
    /// Whether a session created on first use is configured at once with `setRequestor(key.requestorID)`
    /// (its `setRequestorComplete` reaches the delegate like any callback). Calls made before the
    /// configuration completes are held by the engine and run after it, as always.
    public var configuresNewSessions: Bool
    /// How long a session's provider picker (the engine's `displayProviderDialog`, or the platform's)
    /// may wait for the user's choice before the host gives it up: the login's calls end with
    /// `PROVIDER_NOT_SELECTED_ERROR` (and authorizations waiting for it fail), as after the user's
    /// cancel — but unlike `setSelectedProvider(nil)` only this session's picker ends: a login the device
    /// started through another node meanwhile (the registration code it shows there) goes on. A picker
    /// has no deadline of its own (AccessEnabler waits for the user as long as it takes), so without this
    /// a hosted call could wait for ever. Nil never gives up; timed on the host's clock.
    public var providerChoiceTimeout: Duration?
    /// How long a requestor's configuration, fetched for one session, serves every other session of the
    /// host (one request for N sessions, through a `SharedConfigurationBackend`; Adobe asks for about two
    /// minutes). Nil fetches it for each session, as a lone engine does.
    public var configurationValidity: Duration?
    /// How long a resting session that holds nothing (`EngineRest.holdsNothing`: a device that only
    /// asked `checkAuthentication`, or logged out) is kept before the host forgets it, so devices that
    /// pass by once cost no memory for ever; its next call opens a new session (call ids from #1,
    /// configured again). Checked at each idle sweep; nil keeps every session.
    public var forgetEmptySessionsAfter: Duration?
    /// Every engine's settings.
    public var engine: EngineSettings
    /// Each session's own redirect URL (``SessionRedirect``: your https return page with the session
    /// sealed into its query) in place of ``engine``'s `redirectURL`; nil: every session uses that one.
    public var redirect: SessionRedirect?

    /// Settings with defaults: 5 minutes idle, 100,000 resident engines, 32 calls per session, new
    /// sessions configured, a provider choice cancelled after 10 minutes (a login's longest redirect wait),
    /// a requestor's configuration shared by every session for 2 minutes, sessions holding nothing
    /// forgotten after an hour at rest, every session on ``engine``'s redirect URL unless `redirect` is given.
    public init(
        idleTimeout: Duration = .seconds(300), residentLimit: Int = 100_000, mailboxLimit: Int = 32,
        configuresNewSessions: Bool = true, providerChoiceTimeout: Duration? = .seconds(600),
        configurationValidity: Duration? = .seconds(120), forgetEmptySessionsAfter: Duration? = .seconds(3600),
        engine: EngineSettings = EngineSettings(), redirect: SessionRedirect? = nil
    ) {
        self.redirect = redirect
        self.forgetEmptySessionsAfter = forgetEmptySessionsAfter
        self.configurationValidity = configurationValidity
        self.providerChoiceTimeout = providerChoiceTimeout
        self.idleTimeout = idleTimeout
        self.residentLimit = residentLimit
        self.mailboxLimit = mailboxLimit
        self.configuresNewSessions = configuresNewSessions
        self.engine = engine
    }
}
