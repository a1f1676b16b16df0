import EntitlementEngine

/// Receives every session's callbacks, tagged with the session and the calls each one answers.
///
/// The host holds its delegate strongly (unlike `AccessEnabler`, which holds its delegate weakly), so a
/// backend keeps no per-session objects alive. Callbacks of one session arrive in order, one at a time,
/// from that session's engine; callbacks of different sessions may arrive concurrently.
public protocol SessionHostDelegate: AnyObject, Sendable {
    /// Session `key` emitted `callback`, answering `calls` (none for a step such as `navigateToUrl`).
    func session(_ key: SessionKey, emitted callback: Callback, answering calls: [CallID])
}
