import EntitlementEngine

/// One resident session's delegate: tags each callback with the session's key for the host's delegate.
/// The host's registry holds it for as long as the engine is resident (the engine holds it weakly).
final class SessionRelay: AccessEnablerDelegate {
    let key: SessionKey
    let delegate: (any SessionHostDelegate)?

    init(key: SessionKey, delegate: (any SessionHostDelegate)?) {
        self.key = key
        self.delegate = delegate
    }

    func callbackEmitted(_ callback: Callback, answering calls: [CallID]) {
        delegate?.session(key, emitted: callback, answering: calls)
    }
}
