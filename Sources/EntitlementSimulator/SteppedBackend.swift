import EntitlementEngine

/// A backend wrapper that parks every request until it is delivered, so answers reach the
/// engine in a fixed order: scenario runs and replays give the same result every time.
///
/// ``SimulatedSession/settle()`` delivers parked requests strictly in operation order, waiting
/// for the engine to process each answer before the next. Requests of a ``hold(_:)``-ed operation
/// stay parked until ``release(_:)``, which is how a scenario makes a result arrive late.
///
/// A parked request ignores its task's cancellation on purpose: a request the engine gave up on (its
/// deadline passed, or the session closed) still reaches the simulated service when delivered, as a
/// late request reaches the real one — scenarios rely on that (a session request served late replaces
/// a login's code) — and the engine drops its answer. Every parked request ends when it is delivered
/// or the backend is severed (``sever()``); nothing in the engine waits for one it gave up on.
package actor SteppedBackend: EntitlementBackend, Watching {
    private struct Parked {
        let request: BackendRequest
        let resume: CheckedContinuation<Result<BackendResponse, BackendError>, Never>
    }

    private let inner: any EntitlementBackend
    private var parked: [OperationID: Parked] = [:]
    /// Tasks waiting for requests to park (``whenParked(_:)``).
    var watchers = Watchers<Set<OperationID>>()
    private var held: Set<BackendOperation> = []
    private var severed = false

    /// Wraps `inner`.
    package init(_ inner: any EntitlementBackend) { self.inner = inner }

    /// Requests without an operation id are not parked.
    package func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        try await inner.perform(request)
    }

    /// Parks the request until it is delivered.
    package func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError)
        -> BackendResponse
    {
        if severed { throw Self.processEnded }
        let result = await withCheckedContinuation { continuation in
            parked[operation] = Parked(request: request, resume: continuation)
            watchers.resume { $0.isSubset(of: parked.keys) }
        }
        return try result.get()
    }

    /// Returns once every operation in `operations` is parked, at once when severed (a severed backend
    /// parks nothing: its requests fail at once), or when the calling task is cancelled.
    package func whenParked(_ operations: Set<OperationID>) async {
        guard !severed, !operations.isSubset(of: parked.keys) else { return }
        await watch(for: operations)
    }

    /// The oldest parked operation that is not held, if any.
    package func nextDeliverable() -> OperationID? {
        parked.filter { !held.contains($0.value.request.operation) }.keys.min()
    }

    /// Answers `operation` from the inner backend; false when it is not parked.
    @discardableResult
    package func deliver(_ operation: OperationID) async -> Bool {
        guard let entry = parked.removeValue(forKey: operation) else { return false }
        let result: Result<BackendResponse, BackendError>
        do throws(BackendError) {
            result = .success(try await inner.perform(entry.request, operation: operation))
        } catch {
            result = .failure(error)
        }
        entry.resume.resume(returning: result)
        return true
    }

    /// What a severed backend answers.
    static let processEnded = BackendError.network("the engine's process ended")

    /// Cuts the engine off, as when its process dies: every parked request and every later one
    /// fails at once, and nothing reaches the inner backend any more.
    package func sever() {
        severed = true
        let waiting = parked.values
        parked.removeAll()
        for entry in waiting { entry.resume.resume(returning: .failure(Self.processEnded)) }
        watchers.resumeAll()
    }

    /// Keeps requests of `operation` parked until ``release(_:)``.
    package func hold(_ operation: BackendOperation) { held.insert(operation) }

    /// Lets requests of `operation` be delivered again.
    package func release(_ operation: BackendOperation) { held.remove(operation) }

    /// The operations whose requests are parked and held (a script that ends with one has a
    /// result it never let arrive), in operation order.
    package func heldRequests() -> [BackendOperation] {
        parked.filter { held.contains($0.value.request.operation) }.sorted { $0.key < $1.key }.map(\.value.request.operation)
    }

    /// How many requests of `operation` are parked.
    package func parkedCount(_ operation: BackendOperation) -> Int {
        parked.values.filter { $0.request.operation == operation }.count
    }
}
