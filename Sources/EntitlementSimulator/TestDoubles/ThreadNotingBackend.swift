import EntitlementEngine
import EntitlementSupport
import Synchronization

/// A backend that notes which thread ran each request, then asks another: a test checks with it where
/// an engine's requests run (on a `ThreadExecutor`'s thread, say).
package final class ThreadNotingBackend: EntitlementBackend {
    private let inner: any EntitlementBackend
    private let noted = Mutex<[(operation: BackendOperation, thread: UInt)]>([])

    /// Notes each request's thread, then forwards it to `inner`.
    package init(_ inner: any EntitlementBackend) { self.inner = inner }

    /// Every request so far: its operation and the thread it ran on, in order.
    package var requests: [(operation: BackendOperation, thread: UInt)] { noted.withLock { $0 } }

    /// The calling thread, as a number to compare with ``requests``' threads.
    package static var currentThread: UInt { OwnThread.currentID }

    /// Notes the thread, then asks the inner backend.
    package func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        noted.withLock { $0.append((request.operation, OwnThread.currentID)) }
        return try await inner.perform(request)
    }
}
