import EntitlementEngine
import EntitlementHost
import EntitlementSimulator
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The host's memory figure, run by `entitle bench engine` in a child process of its own: many
/// authenticated devices, each brought into a host by one call, measured resting and resident.
package enum BenchSessions {
    /// A store that keeps each device's tokens encoded and decodes them on every load, as a network store
    /// does: an engine's copy shares nothing with the store (an in-memory store would share its strings
    /// and hide the cost).
    final class EncodedStorage: TokenStorage {
        private let contents = Mutex<[String: [String: (bytes: [UInt8], version: StorageVersion)]]>([:])

        func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
            guard let stored = contents.withLock({ $0[deviceID]?[requestorID] }) else { return .absent }
            guard let tokens = try? JSONDecoder().decode(StoredTokens.self, from: Data(stored.bytes)) else {
                throw .unavailable("undecodable bench tokens")
            }
            return VersionedTokens(tokens, version: stored.version)
        }

        func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
            async throws(TokenStorageError) -> StorageVersion
        {
            guard let bytes = try? JSONEncoder().encode(tokens) else { throw .unavailable("unencodable bench tokens") }
            let result: Result<StorageVersion, TokenStorageError> = contents.withLock { contents in
                let current = contents[deviceID]?[requestorID]?.version ?? .absent
                guard current == expected else { return .failure(.conflict(current: current)) }
                contents[deviceID, default: [:]][requestorID] = (Array(bytes), current.next)
                return .success(current.next)
            }
            return try result.get()
        }

        func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
            contents.withLock { $0[deviceID]?[requestorID]?.version ?? .absent }
        }
    }

    /// Prints `resident bytes per session: N` and `resting bytes per session: N`; 0 when every session
    /// was authenticated, 1 otherwise.
    package static func run(sessions: Int) async -> Int32 {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 101)
        let storage = EncodedStorage()
        let expires = clock.now().adding(.seconds(86_400))
        let profile: [String: MetadataValue] = ["zip": .list(["10001"]), "householdID": .text("hh-alice"), "maxRating": .text("TV-MA")]
        let restingCount = sessions, residentCount = max(1, sessions / 10)
        for index in 0..<(restingCount + residentCount) {
            let device = "bench-device-\(index)"
            let login = AuthenticationToken(
                mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "user-\(index)", expires: expires, metadata: profile)
            guard (try? await storage.save(
                StoredTokens(authentication: login, deviceID: device), deviceID: device, requestorID: "sim-requestor",
                replacing: .absent)) != nil
            else { return 1 }
        }
        // Resting: a small resident limit (1 %) puts each session to rest as the next ones arrive.
        guard let resting = await measure(
            devices: 0..<restingCount, residentLimit: max(1, restingCount / 100), simulator: simulator, storage: storage,
            clock: clock)
        else { return 1 }
        print(
            "resting: \(restingCount) sessions in a host with a resident limit of 1 %: "
                + "\(resting.statistics.resting) resting, \(resting.statistics.resident) resident")
        // Resident: every engine stays.
        guard let resident = await measure(
            devices: restingCount..<(restingCount + residentCount), residentLimit: .max, simulator: simulator, storage: storage,
            clock: clock)
        else { return 1 }
        print("resident: \(residentCount) more sessions (a tenth as many) in a host without a limit: \(resident.statistics.resident) resident")
        print(
            "inline sizes: machine \(MemoryLayout<EntitlementMachine>.size) B, settings \(MemoryLayout<EngineSettings>.size) B, "
                + "authentication token \(MemoryLayout<AuthenticationToken>.size) B, stored tokens \(MemoryLayout<StoredTokens>.size) B, "
                + "authentication \(MemoryLayout<AuthenticationState>.size) B, configuration \(MemoryLayout<ConfigurationState>.size) B, "
                + "environment \(MemoryLayout<EngineEnvironment>.size) B")
        print("resident bytes per session: \(resident.bytes / residentCount)")
        print("resting bytes per session: \(resting.bytes / restingCount)")
        withExtendedLifetime((resting.host, resident.host)) {}
        guard let (peak, held) = await driveBy(devices: sessions, simulator: simulator, clock: clock) else { return 1 }
        print("drive-by: two waves of \(sessions) devices that call once, each wave forgotten: +\(peak / 1_048_576) MB at the peak")
        print("drive-by held bytes after the second wave: \(held)")
        print("drive-by peak bytes: \(peak)")
        return 0
    }

    /// Two waves of `devices` devices that call `checkAuthentication` once and never again, each forgotten
    /// by the host's sweeps: the resident set's growth at the first wave's peak, and what it still holds
    /// once the second wave is forgotten (the host hands the freed pages back to the system).
    private static func driveBy(devices: Int, simulator: Simulator, clock: ManualClock) async -> (peak: Int, held: Int)? {
        let before = residentSetBytes()
        var peak = 0
        let host = SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(60), providerChoiceTimeout: nil, forgetEmptySessionsAfter: .seconds(60)),
            backend: simulator.backend, storage: InMemoryTokenStorage(), clock: clock,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
        for wave in 0..<2 {
            for index in 0..<devices {
                let key = SessionKey(deviceID: "passer-\(wave)-\(index)", requestorID: "sim-requestor")
                guard (try? await host.answer(to: .checkAuthentication, on: key)) != nil else { return nil }
            }
            peak = max(peak, residentSetBytes() - before)
            for _ in 0..<2 {  // one sweep rests them, the next forgets them
                await clock.advance(by: .seconds(61))
                await host.evictIdleSessions()
            }
            guard host.statistics.resident + host.statistics.resting == 0 else { return nil }
            try? await Task.sleep(for: .seconds(2))  // the host trims a second after forgetting
        }
        // The trim runs on a thread of its own a second after the sweep: on a loaded machine, later.
        // What is held is read once it is a tenth of the peak or less, or after 30 s (without the trim: never).
        var held = residentSetBytes() - before
        for _ in 0..<300 where held > peak / 10 {
            try? await Task.sleep(for: .milliseconds(100))
            held = residentSetBytes() - before
        }
        return (peak, held)
    }

    /// Brings `devices` into a new host with one `checkAuthentication` each; the growth of the resident
    /// set size, with the host (kept alive by the caller).
    private static func measure(
        devices: Range<Int>, residentLimit: Int, simulator: Simulator, storage: EncodedStorage, clock: ManualClock
    ) async -> (bytes: Int, statistics: SessionHostStatistics, host: SessionHost)? {
        let before = residentSetBytes()
        let host = SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(86_400), residentLimit: residentLimit, mailboxLimit: 4),
            backend: simulator.backend, storage: storage, clock: clock,
            environment: { .deterministic(clock: clock, deviceID: $0.deviceID) })
        for index in devices {
            let key = SessionKey(deviceID: "bench-device-\(index)", requestorID: "sim-requestor")
            guard let answer = try? await host.answer(to: .checkAuthentication, on: key),
                answer == .setAuthenticationStatus(status: 1, errorCode: "")
            else {
                print("bench: session \(index) was not authenticated")
                return nil
            }
        }
        return (residentSetBytes() - before, host.statistics, host)
    }

    /// This process's resident set size, from /proc (0 where there is none).
    static func residentSetBytes() -> Int {
        guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = statm.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }
}
