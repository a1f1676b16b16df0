// The engine's API speaks the machine's and REST API V2's types (calls, callbacks, profiles, sessions,
// decisions, times, JSON): importing EntitlementEngine imports them too, as `NIO` re-exports `NIOCore`.
@_exported import EntitlementCore
@_exported import EntitlementV2
