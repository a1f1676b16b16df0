// The engine's API speaks REST API V2's types (profiles, sessions, decisions, times, JSON): importing
// EntitlementEngine imports them too, as `NIO` re-exports `NIOCore`.
@_exported import EntitlementV2
