import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import Foundation
import Synchronization

/// `entitle bench engine --only host`: whole logins through one ``SessionHost``, 32 devices at a time.
extension EngineBenchmark {
    /// How many devices log in at once.
    static let hostLoginConcurrency = 32

    /// Logins through one host on the embedded simulator (in-memory store, system clock), each by a new
    /// device: `getAuthentication`, the picker's choice, the MVPD's login page the host asked the app to
    /// open, and the redirect back, answered `setAuthenticationStatus(1)`. Every login must end so, or the
    /// row says how many did not.
    func hostLoginRow() async -> Row {
        let figure = "host logins through SessionHost, \(Self.hostLoginConcurrency) at a time"
        let target = "≥ 13 k logins/s"
        let clock = SystemClock()
        let simulator = Simulator(clock: clock)
        let pages = LoginPages()
        let host = SessionHost(settings: SessionHostSettings(engine: .simulated), backend: simulator.backend, clock: clock, delegate: pages)
        let started = HostLogins()
        _ = await started.run(for: seconds / 4, host: host, pages: pages, simulator: simulator)  // warm-up
        let cpuBefore = BenchGate.processCPU()
        let timed = await started.run(for: seconds, host: host, pages: pages, simulator: simulator)
        let cpu = BenchGate.processCPU() - cpuBefore
        let held = host.statistics.resident + host.statistics.resting
        _ = await host.shutdown(gracePeriod: .seconds(1))
        let rate = Double(timed.logins) / timed.seconds
        print(
            "host logins: \(Self.hostLoginConcurrency) devices at a time through one SessionHost on the embedded simulator "
                + "(getAuthentication, the picker's choice, the MVPD's login page, the redirect back); \(timed.logins) logins in "
                + "\(String(format: "%.2f", timed.seconds)) s, \(String(format: "%.0f", cpu / Double(max(timed.logins, 1)) * 1e6)) µs of CPU a login, "
                + "\(held) sessions held")
        guard timed.failures == 0 else {
            return Row(figure: figure, measured: "\(timed.failures) LOGINS FAILED", target: target, met: false)
        }
        return Row(figure: figure, measured: String(format: "%.1f k logins/s", rate / 1_000), target: target, met: rate >= 13_000)
    }
}

/// The login page the host asked each device's app to open.
private final class LoginPages: SessionHostDelegate {
    private let pages = Mutex<[SessionKey: String]>([:])

    func session(_ key: SessionKey, emitted callback: Callback, answering calls: [CallID]) {
        if case .navigateToUrl(let url) = callback { pages.withLock { $0[key] = url } }
    }

    /// The page `key` was sent to, forgotten as it is taken.
    func take(_ key: SessionKey) -> String? { pages.withLock { $0.removeValue(forKey: key) } }
}

/// Devices numbered on from one run to the next, so each login is a new device's.
private final class HostLogins: Sendable {
    private let nextDevice = Atomic<Int>(0)

    /// Logins by `EngineBenchmark.hostLoginConcurrency` workers until `duration` seconds have passed.
    func run(for duration: Double, host: SessionHost, pages: LoginPages, simulator: Simulator) async -> (logins: Int, failures: Int, seconds: Double) {
        let start = ContinuousClock.now
        let end = start + .seconds(duration)
        let outcomes = await withTaskGroup(of: (Int, Int).self) { group in
            for _ in 0..<EngineBenchmark.hostLoginConcurrency {
                group.addTask {
                    var logins = 0
                    var failures = 0
                    while ContinuousClock.now < end {
                        let device = self.nextDevice.add(1, ordering: .relaxed).oldValue
                        let key = SessionKey(deviceID: "login-\(device)", requestorID: "sim-requestor")
                        if await Self.logIn(key, host: host, pages: pages, simulator: simulator) { logins += 1 } else { failures += 1 }
                    }
                    return (logins, failures)
                }
            }
            return await group.reduce(into: (0, 0)) { $0.0 += $1.0; $0.1 += $1.1 }
        }
        return (outcomes.0, outcomes.1, EngineBenchmark.seconds(ContinuousClock.now - start))
    }

    /// One device's login, from its first call to the answer of its redirect.
    private static func logIn(_ key: SessionKey, host: SessionHost, pages: LoginPages, simulator: Simulator) async -> Bool {
        do {
            try await host.call(.getAuthentication(forceAuthn: false, data: [:]), on: key)
            try await host.call(.setSelectedProvider("acme-cable"), on: key)
            await host.whenSettled(key)
            guard let page = pages.take(key) else { return false }
            let visit = await simulator.userAgent.logIn(at: page, username: "alice", password: "wonderland")
            guard let redirect = visit.appURL else { return false }
            return try await host.answer(to: .handleExternalURL(redirect), on: key) == .setAuthenticationStatus(status: 1, errorCode: "")
        } catch {
            return false
        }
    }
}
