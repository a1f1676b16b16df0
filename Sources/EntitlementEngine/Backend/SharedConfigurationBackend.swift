import Synchronization

/// A backend that fetches each requestor's configuration once for every engine it serves, and keeps
/// the answer for `validity`; every other request passes through to the backend it wraps.
///
/// A configuration is the same for every device of a requestor (REST API V2 keys it by service
/// provider and platform type, not by user), and Adobe asks server-to-server integrations to cache it
/// in memory for about two minutes rather than fetch it per device. Wrap the ``V2Client`` every engine of
/// a process shares (`EntitlementHost`'s `SessionHost` does so by default):
///
/// ```swift
/// let shared = SharedConfigurationBackend(v2Client, validity: .seconds(120), clock: SystemClock())
/// let enabler = AccessEnabler(backend: shared, environment: .live(deviceID: deviceID))
/// ```
///
/// - At most one fetch per requestor is in flight: engines that ask meanwhile wait for it. A caller
///   whose task is cancelled (its engine's request deadline passed) stops waiting at once, with
///   ``BackendError/timeout``; the fetch goes on for the others.
/// - A fetch that takes longer than `fetchTimeout` is abandoned: the next caller cancels it and
///   fetches again, so a hung service never holds later callers for longer than their own deadline.
/// - Only a configuration answer is kept. A failure is passed to the callers that waited for that
///   fetch and never kept: the next caller fetches again (each engine's own retry pause applies).
/// - A new configuration (an MVPD added or removed) reaches the engines once the kept one expires.
///
/// Every engine still sees its own `configuration` request and answer (its monitor, trace and
/// transcript are unchanged); only the service sees fewer requests.
public final class SharedConfigurationBackend: EntitlementBackend {
    private let backend: any EntitlementBackend
    private let validity: Duration
    private let fetchTimeout: Duration
    private let clock: any EngineClock
    private let table = Mutex<[String: Entry]>([:])
    private let fetchCount = Atomic<Int>(0)

    private typealias Answer = Result<BackendResponse, BackendError>

    /// What is kept for one requestor.
    private enum Entry {
        /// A fetch in flight since `started`, with the callers waiting for it.
        case fetching(Fetch, started: Timestamp)
        /// The answer, kept until `until`.
        case kept(BackendResponse, until: Timestamp)
    }

    /// One fetch: its task and its waiters, each by a number so a cancelled one can leave.
    private final class Fetch: Sendable {
        let id: UInt64
        let task = Mutex<Task<Void, Never>?>(nil)
        let waiters = Mutex<[UInt64: CheckedContinuation<Answer, Never>]>([:])
        init(id: UInt64) { self.id = id }
    }

    private let lastID = Atomic<UInt64>(0)

    /// Wraps `service`.
    /// - Parameters:
    ///   - service: the service every request other than a configuration goes to, and the configurations too when none is kept.
    ///   - validity: how long a configuration answer is kept (at least 1 s, at most 1 hour).
    ///   - fetchTimeout: how long one fetch may take before the next caller abandons it (at least 1 s).
    ///   - clock: times validity and fetches; give the clock your engines use.
    public init(
        _ service: any EntitlementService, validity: Duration = .seconds(120), fetchTimeout: Duration = .seconds(30),
        clock: any EngineClock
    ) {
        self.backend = service.port.backend
        self.validity = min(max(validity, .seconds(1)), .seconds(3600))
        self.fetchTimeout = max(fetchTimeout, .seconds(1))
        self.clock = clock
    }

    /// How many configuration requests reached the wrapped backend so far.
    package var configurationFetches: Int { fetchCount.load(ordering: .relaxed) }

    /// Forgets every kept configuration (the next engine of each requestor fetches again).
    package func forgetConfigurations() { table.withLock { $0 = $0.filter { if case .fetching = $0.value { true } else { false } } } }

    /// This backend itself.
    public var port: BackendPort { BackendPort(self) }

    /// Performs `request`, answering a requestor's configuration from memory while it is valid.
    package func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        try await perform(request, operation: OperationID(0, owner: nil))
    }

    /// Performs `request`, answering a requestor's configuration from memory while it is valid.
    package func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError) -> BackendResponse {
        guard case .configuration(let context) = request else { return try await backend.perform(request, operation: operation) }
        return try await configuration(context.requestorID, request, operation).get()
    }

    private func configuration(_ requestorID: String, _ request: BackendRequest, _ operation: OperationID) async -> Answer {
        if Task.isCancelled { return .failure(.timeout) }
        let waiter = lastID.add(1, ordering: .relaxed).newValue
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Answer, Never>) in
                let now = clock.now()
                let step = table.withLock { table -> (answer: BackendResponse?, start: Fetch?, abandon: Fetch?) in
                    var abandoned: Fetch?
                    switch table[requestorID] {
                    case .kept(let response, let until)? where now < until:
                        return (response, nil, nil)
                    case .fetching(let fetch, let started)? where now < started.adding(fetchTimeout):
                        fetch.waiters.withLock { $0[waiter] = continuation }
                        return (nil, nil, nil)
                    case .fetching(let fetch, _)?:
                        abandoned = fetch
                    case .kept?, nil:
                        break
                    }
                    let fetch = Fetch(id: lastID.add(1, ordering: .relaxed).newValue)
                    fetch.waiters.withLock { $0[waiter] = continuation }
                    table[requestorID] = .fetching(fetch, started: now)
                    return (nil, fetch, abandoned)
                }
                if let response = step.answer {
                    continuation.resume(returning: .success(response))
                    return
                }
                if let abandoned = step.abandon { abandon(abandoned) }
                if let fetch = step.start { start(fetch, requestorID, request, operation) }
                // Cancelled while joining: the handler may have run before this caller was a waiter.
                if Task.isCancelled { leave(waiter, requestorID) }
            }
        } onCancel: {
            leave(waiter, requestorID)
        }
    }

    /// Runs one fetch and hands its answer to everyone waiting for it; keeps a configuration answer.
    private func start(_ fetch: Fetch, _ requestorID: String, _ request: BackendRequest, _ operation: OperationID) {
        fetchCount.add(1, ordering: .relaxed)
        let task = Task {
            let answer: Answer
            do throws(BackendError) {
                answer = .success(try await backend.perform(request, operation: operation))
            } catch {
                answer = .failure(error)
            }
            let until = clock.now().adding(validity)
            table.withLock { table in
                guard case .fetching(let current, _)? = table[requestorID], current.id == fetch.id else { return }
                if case .success(let response) = answer, case .configuration = response {
                    table[requestorID] = .kept(response, until: until)
                } else {
                    table[requestorID] = nil
                }
            }
            let waiters = fetch.waiters.withLock { waiters in
                defer { waiters = [:] }
                return waiters
            }
            for waiter in waiters.values { waiter.resume(returning: answer) }
        }
        fetch.task.withLock { $0 = task }
    }

    /// A fetch past its time: cancelled, and its waiters told it timed out (their engines' own
    /// deadlines have passed by now, so nobody is still listening in practice).
    private func abandon(_ fetch: Fetch) {
        fetch.task.withLock { $0?.cancel() }
        let waiters = fetch.waiters.withLock { waiters in
            defer { waiters = [:] }
            return waiters
        }
        for waiter in waiters.values { waiter.resume(returning: .failure(.timeout)) }
    }

    /// A caller whose task was cancelled stops waiting; the fetch goes on for the others.
    private func leave(_ waiter: UInt64, _ requestorID: String) {
        let fetch = table.withLock { table -> Fetch? in
            if case .fetching(let fetch, _)? = table[requestorID] { return fetch }
            return nil
        }
        fetch?.waiters.withLock { $0.removeValue(forKey: waiter) }?.resume(returning: .failure(.timeout))
    }
}
