import Synchronization

/// The first of several racing results (an answer or its deadline): later offers are dropped.
package final class FirstResult<Value: Sendable>: Sendable {
    private enum Slot {
        case empty
        case waiting(CheckedContinuation<Value, Never>)
        case done(Value)
    }

    private let slot = Mutex<Slot>(.empty)

    /// A race with no result yet.
    package init() {}

    /// Offers a result; only the first one counts.
    package func offer(_ value: Value) {
        let waiter: CheckedContinuation<Value, Never>? = slot.withLock { slot in
            switch slot {
            case .empty:
                slot = .done(value)
                return nil
            case .waiting(let continuation):
                slot = .done(value)
                return continuation
            case .done:
                return nil
            }
        }
        waiter?.resume(returning: value)
    }

    /// The first result, once there is one — or `cancelled`, offered as a result, as soon as the
    /// calling task is cancelled (every wait ends).
    package func value(orIfCancelled cancelled: Value) async -> Value {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let ready: Value? = slot.withLock { slot in
                    switch slot {
                    case .empty:
                        slot = .waiting(continuation)
                        return nil
                    case .done(let value):
                        return value
                    case .waiting:
                        return nil  // one reader only
                    }
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            offer(cancelled)
        }
    }
}
