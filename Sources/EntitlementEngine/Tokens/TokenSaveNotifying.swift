import Synchronization

/// A token storage that can tell when tokens were saved — by this process or, for a shared store,
/// by another node — so engines learn of another writer's change at once instead of at their next
/// input (``AccessEnabler/checkStorage()``; a session host subscribes for its engines).
///
/// A notification only says *which* tokens to look at: the engine still reads the version (and the
/// tokens if it changed) through ``TokenStorage``, so a lost, late or duplicated notification costs
/// nothing but a read. Handlers are called outside the store's locks, from any thread.
public protocol TokenSaveNotifying: TokenStorage {
    /// Calls `handler` with the device and requestor of every save from now on, until the returned
    /// observation is cancelled (or released).
    func observeSaves(_ handler: @escaping @Sendable (_ deviceID: String, _ requestorID: String) -> Void) -> SaveObservation
}

/// A subscription to a store's saves; cancelling (or releasing) it ends the calls.
public final class SaveObservation: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    /// An observation that runs `onCancel` once, when cancelled or released.
    public init(onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }

    deinit { cancel() }

    /// Ends the observation; later calls do nothing.
    public func cancel() {
        let cancel = onCancel.withLock { current -> (@Sendable () -> Void)? in
            defer { current = nil }
            return current
        }
        cancel?()
    }
}
