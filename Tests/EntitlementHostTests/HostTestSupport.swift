import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import EntitlementTestSupport
import EntitlementTracing
import Foundation
import Synchronization
import Testing

/// A simulator, a clock, a store and a delegate that records, for one test.
struct Rig {
    let clock: ManualClock
    let simulator: Simulator
    let storage = InMemoryTokenStorage()
    let delegate = RecordingHostDelegate()

    /// A rig whose simulated service reads `start` (a host on the system clock needs the service on its time).
    init(start: Timestamp = ManualClock().now()) {
        clock = ManualClock(start: start)
        simulator = Simulator(world: .default, clock: clock, seed: 101)
    }

    func host(
        idleTimeout: Duration = .seconds(300), residentLimit: Int = 100, mailboxLimit: Int = 32, configures: Bool = true,
        metrics: (any EngineMetricsHandler)? = nil, backend: (any EntitlementBackend)? = nil,
        monitor: @escaping @Sendable (SessionKey) -> (any EngineMonitor)? = { _ in nil }, providers: ProviderChain? = nil,
        device: @escaping @Sendable (SessionKey) -> V2DeviceInfo? = { _ in nil }
    ) -> SessionHost {
        let clock = self.clock
        return SessionHost(
            settings: SessionHostSettings(
                idleTimeout: idleTimeout, residentLimit: residentLimit, mailboxLimit: mailboxLimit, configuresNewSessions: configures, engine: .simulated),
            backend: backend ?? simulator.backend, storage: storage, clock: clock, delegate: delegate, metrics: metrics,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID) }, monitor: monitor, device: device,
            providers: providers)
    }
}

/// Every callback the host delivered, by session.
final class RecordingHostDelegate: SessionHostDelegate {
    struct Entry: Sendable, Equatable {
        let key: SessionKey
        let callback: Callback
        let calls: [CallID]
    }

    private let log = Mutex<[Entry]>([])

    func session(_ key: SessionKey, emitted callback: Callback, answering calls: [CallID]) {
        log.withLock { $0.append(Entry(key: key, callback: callback, calls: calls)) }
    }

    func entries(of key: SessionKey) -> [Entry] { log.withLock { $0.filter { $0.key == key } } }

    /// The callbacks that answer calls (tracking data and other steps left out).
    func answers(of key: SessionKey) -> [AnsweredCallback] { callbacks(of: key).filter { !$0.answering.isEmpty } }

    func callbacks(of key: SessionKey) -> [AnsweredCallback] {
        entries(of: key).map { AnsweredCallback(callback: $0.callback, answering: $0.calls) }
    }

    var lastNavigation: String? {
        log.withLock { log in
            log.reversed().lazy.compactMap { entry -> String? in
                if case .navigateToUrl(let url) = entry.callback { return url }
                return nil
            }.first
        }
    }
}

/// A plain engine's delegate that records callbacks with their calls, like the host's delegate does.
final class Collector: Sendable {
    final class Plain: AccessEnablerDelegate {
        let log = Mutex<[AnsweredCallback]>([])
        func callbackEmitted(_ callback: Callback, answering calls: [CallID]) {
            log.withLock { $0.append(AnsweredCallback(callback: callback, answering: calls)) }
        }
    }

    let plain = Plain()
    var callbacks: [AnsweredCallback] { plain.log.withLock { $0 } }
    var lastNavigation: String? {
        callbacks.reversed().lazy.compactMap { answered -> String? in
            if case .navigateToUrl(let url) = answered.callback { return url }
            return nil
        }.first
    }
}

/// Counters and gauges as the host reports them.
final class Gauges: EngineMetricsHandler {
    private let values = Mutex<(counters: [String: Int64], gauges: [String: Int64])>(([:], [:]))
    func increment(counter label: String, dimensions: [(String, String)], by amount: Int64) {
        values.withLock { $0.counters[label, default: 0] += amount }
    }
    func record(timer label: String, dimensions: [(String, String)], nanoseconds: Int64) {}
    func record(gauge label: String, dimensions: [(String, String)], value: Int64) { values.withLock { $0.gauges[label] = value } }
    func last(_ label: String) -> Int64? { values.withLock { $0.gauges[label] } }
    func total(_ label: String) -> Int64 { values.withLock { $0.counters[label] ?? 0 } }
}

/// A backend whose answers wait until the test releases them.
final class HeldBackend: EntitlementBackend {
    private let inner: any EntitlementBackend
    private let state = Mutex<(released: Bool, held: Int, waiting: [CheckedContinuation<Void, Never>])>((false, 0, []))

    init(_ inner: any EntitlementBackend) { self.inner = inner }

    var held: Int { state.withLock { $0.held } }

    func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        try await perform(request, operation: OperationID(0, owner: nil))
    }

    func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError) -> BackendResponse {
        await withCheckedContinuation { continuation in
            let go = state.withLock { state -> Bool in
                if state.released { return true }
                state.held += 1
                state.waiting.append(continuation)
                return false
            }
            if go { continuation.resume() }
        }
        return try await inner.perform(request, operation: operation)
    }

    func release() {
        let waiting = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.released = true
            defer { state.waiting = [] }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }
}

/// A backend that counts the configuration requests it passes on.
final class CountingBackend: EntitlementBackend {
    private let inner: any EntitlementBackend
    private let count = Mutex(0)
    init(_ inner: any EntitlementBackend) { self.inner = inner }
    var configurations: Int { count.withLock { $0 } }
    func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse {
        try await perform(request, operation: OperationID(0, owner: nil))
    }
    func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError) -> BackendResponse {
        if case .configuration = request { count.withLock { $0 += 1 } }
        return try await inner.perform(request, operation: operation)
    }
}

/// A flag one task sets and another reads.
final class Finished: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}

/// The production checklist's Swift block that starts with `opening`, and the code of `file` between
/// `// MARKER-BEGIN` and `// MARKER-END` (one indentation level of a test taken off): a test holds the
/// two equal, so the checklist's example is code that compiles and runs.
struct ChecklistBlock {
    let documented: String
    let tested: String

    init(opening: String, marker: String, in file: String) throws {
        let checklist = try String(
            contentsOf: URL(fileURLWithPath: file).appendingPathComponent(
                "../../../Sources/EntitlementEngine/EntitlementEngine.docc/ProductionChecklist.md"
            ).standardized, encoding: .utf8)
        let rest = try #require(checklist.components(separatedBy: "```swift\n" + opening).dropFirst().first?
            .components(separatedBy: "\n```").first)
        documented = opening + rest
        let lines = try String(contentsOf: URL(fileURLWithPath: file), encoding: .utf8).components(separatedBy: "\n")
        let begin = try #require(lines.firstIndex { $0.hasSuffix("// \(marker)-BEGIN") })
        let end = try #require(lines.firstIndex { $0.hasSuffix("// \(marker)-END") })
        tested = lines[(begin + 1)..<end].map { $0.hasPrefix("        ") ? String($0.dropFirst(8)) : $0 }.joined(separator: "\n")
    }
}

/// Counts the calls an engine received, by name (`EngineEvent.callReceived`): a test waits for a call
/// to reach the engine rather than pause for it.
final class CallsReceived: EngineMonitor {
    private let names = Mutex<[String]>([])

    func observe(_ event: EngineEvent) {
        if case .callReceived(_, let call) = event { names.withLock { $0.append(call.name) } }
    }

    /// How many calls named `name` were received.
    func count(of name: String) -> Int { names.withLock { $0.filter { $0 == name }.count } }
}
