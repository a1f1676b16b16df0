import EntitlementEngine
import EntitlementSimulator
import Foundation

/// `entitle bench storage`: what an input costs when the device's file holds a profile with 2,000
/// metadata attributes — the engine asking the stored version before each input (what it does) against
/// reading and comparing the whole file before each input (what it did before versions), in one run.
package struct StorageBenchmark {
    /// The file store with the version answered by a full read, as a store without a cheap version does.
    final class FullReadStorage: TokenStorage {
        let inner: FileTokenStorage
        init(_ inner: FileTokenStorage) { self.inner = inner }
        func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
            try await inner.load(deviceID: deviceID, requestorID: requestorID)
        }
        func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
            async throws(TokenStorageError) -> StorageVersion
        {
            try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
        }
        // `version` is the protocol's default: a full load.
    }

    static let attributes = 2_000
    static let callsPerRound = 200

    /// A run of the file store's figures.
    package init() {}

    /// Measures `rounds` rounds and prints the figures; the exit status (0 when every round completed).
    package func run(rounds: Int) async -> Int32 {
        var versioned: [Double] = [], fullRead: [Double] = []
        for _ in 0..<rounds {
            for useVersion in [true, false] {
                guard let seconds = await Self.measure(useVersion: useVersion) else { return 1 }
                if useVersion { versioned.append(seconds) } else { fullRead.append(seconds) }
            }
        }
        let perCall = { (seconds: Double) in seconds / Double(Self.callsPerRound) * 1_000_000 }
        let a = Self.median(versioned), b = Self.median(fullRead)
        print("\(Self.attributes) metadata attributes on file, \(Self.callsPerRound) checkAuthentication calls per round, \(rounds) rounds, medians")
        print(String(format: "version per input   : %9.1f µs/call", perCall(a)))
        print(String(format: "full read per input : %9.1f µs/call", perCall(b)))
        print(String(format: "ratio               : checking the version is %.1f× faster", b / a))
        return 0
    }

    /// Seconds for `callsPerRound` calls on a fresh engine over a store holding a profile with `resources` metadata attributes.
    static func measure(useVersion: Bool) async -> Double? {
        let folder = NSTemporaryDirectory() + "entitle-bench-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: folder) }
        guard let files = try? FileTokenStorage(folder: folder) else { return nil }
        let clock = ManualClock()
        let expires = clock.now().adding(.seconds(86_400))
        var metadata: [String: MetadataValue] = [:]
        for index in 0..<attributes { metadata["attribute-\(index)"] = .text("value-\(index)") }
        let login = AuthenticationToken(
            mvpdID: "acme-cable", requestorID: "sim-requestor", userID: "u", expires: expires, metadata: metadata)
        guard (try? await files.save(
            StoredTokens(authentication: login, deviceID: "device-1"),
            deviceID: "device-1", requestorID: "sim-requestor", replacing: .absent)) != nil
        else { return nil }
        let storage: any TokenStorage = useVersion ? files : FullReadStorage(files)
        let session = SimulatedSession(storage: storage, clock: clock)
        await session.enabler.setRequestor("sim-requestor")
        await session.settle()
        let start = ContinuousClock.now
        for _ in 0..<callsPerRound { await session.enabler.checkAuthentication() }
        let elapsed = ContinuousClock.now - start
        let (seconds, attoseconds) = elapsed.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    private static func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
}
