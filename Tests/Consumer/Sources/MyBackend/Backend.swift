import EntitlementEngine
import EntitlementHTTP
import EntitlementHost
import EntitlementRedis
import Foundation
import Synchronization

/// Logs what the engine does: operations, failures, rows.
public final class Watcher: EngineMonitor {
    /// What was seen, a line each.
    public let lines = Mutex<[String]>([])
    /// Sees nothing yet.
    public init() {}
    /// Notes the backend's operations and the rows taken.
    public func observe(_ event: EngineEvent) {
        switch event {
        case .backendRequested(let operation, let sent): lines.withLock { $0.append("\(operation) → \(sent.operation.rawValue)") }
        case .backendFinished(let operation, let outcome):
            lines.withLock { $0.append("\(operation) ← \(outcome.error.map { "\($0.code)" } ?? "ok")") }
        case .transition(let row): lines.withLock { $0.append("row \(row)") }
        default: break
        }
    }
}

/// The devices' side of a host: every callback, by device.
public final class Devices: SessionHostDelegate {
    /// `device callback`, a line each.
    public let seen = Mutex<[String]>([])
    /// Has seen nothing yet.
    public init() {}
    /// Notes the callback.
    public func session(_ key: SessionKey, emitted callback: Callback, answering calls: [CallID]) {
        seen.withLock { $0.append("\(key.deviceID) \(callback.name)") }
    }
}

/// An engine for one device on Adobe Pass: the client, configurations shared per requestor, tokens in files.
public func productionEngine(deviceID: String, adobePassURL: String, softwareStatement: String, delegate: any AccessEnablerDelegate) throws -> AccessEnabler {
    let adobe = V2Client(
        transport: HTTPV2Transport(baseURL: adobePassURL),
        softwareStatement: softwareStatement,
        credentials: FileV2CredentialStore(path: NSTemporaryDirectory() + "/entitle-consumer-credentials.json"),
        baseURL: adobePassURL, clock: SystemClock(),
        devices: { _ in V2Device(info: .unknown(publicAddress: "203.0.113.7"), publicAddress: "203.0.113.7") })
    let shared = SharedConfigurationBackend(adobe, validity: .seconds(120), clock: SystemClock())
    return AccessEnabler(
        backend: shared, delegate: delegate, storage: try FileTokenStorage(folder: NSTemporaryDirectory() + "/entitle-consumer-tokens"),
        environment: .live(deviceID: deviceID),
        settings: EngineSettings(redirectURL: "myapp://adobe", domainName: "myservice.example"))
}

/// A node of a fleet: a host whose sessions share a Redis store with the other nodes.
public func fleetHost(adobe: V2Client, redisURL: String, devices: Devices) async throws -> SessionHost {
    let redis = try await RedisConnector.connect(try RedisConfiguration(url: redisURL))
    let storage = RedisTokenStorage(client: redis, keyPrefix: "myapp")
    return SessionHost(
        settings: SessionHostSettings(engine: EngineSettings(domainName: "myservice.example")),
        backend: adobe, storage: storage, delegate: devices)
}
