import EntitlementEngine

/// One resident session's delegate: tags each callback with the session's key for the host's delegate,
/// and tells the host when the session opened a provider picker (to time the user's choice).
/// The host's registry holds it for as long as the engine is resident (the engine holds it weakly).
final class SessionRelay: AccessEnablerDelegate {
    let key: SessionKey
    let delegate: (any SessionHostDelegate)?
    let pickerOpened: (@Sendable () -> Void)?

    init(key: SessionKey, delegate: (any SessionHostDelegate)?, pickerOpened: (@Sendable () -> Void)? = nil) {
        self.key = key
        self.delegate = delegate
        self.pickerOpened = pickerOpened
    }

    func callbackEmitted(_ callback: Callback, answering calls: [CallID]) {
        if let pickerOpened {
            switch callback {
            case .displayProviderDialog, .presentTvProviderDialog: pickerOpened()
            default: break
            }
        }
        delegate?.session(key, emitted: callback, answering: calls)
    }
}
