import EntitlementCommandLine
import EntitlementEngine
import EntitlementHTTP
import EntitlementRedis
import Foundation
import Synchronization

/// `entitle register`: registers a software statement with REST API V2 once and keeps the client
/// credentials where the service's nodes read them (Redis for a fleet, or a file), printing only the
/// client id. Credentials already stored are kept: the command then says so and registers nothing.
struct RegisterCommand {
    /// The V2 service's base URL (`AdobePassHost`, or `entitle serve`'s).
    let adobe: String
    /// Where the software statement is: a file, or `-` for standard input (never an argument: it is a secret).
    let statementFile: String
    /// `redis://HOST:PORT[/DB]` (a standalone server or any node of a cluster) or `file:PATH`.
    let store: String

    func run() async -> ExitStatus {
        guard let statement = readStatement() else { return .noInput }
        guard !statement.isEmpty else {
            StandardError.write("entitle register: the software statement is empty\n")
            return .invalidInput
        }
        let credentials: any V2CredentialStore
        var redis: (any RedisCommandSender)?
        if store.hasPrefix("file:") {
            credentials = FileV2CredentialStore(path: String(store.dropFirst("file:".count)))
        } else {
            let configuration: RedisConfiguration
            do {
                configuration = try RedisConfiguration(url: store, connections: 1)
            } catch {
                StandardError.write("entitle register: \(error)\n")
                return .usage
            }
            do {
                redis = try await RedisConnector.connect(configuration)
            } catch {
                StandardError.write("entitle register: Redis at \(configuration) cannot be used: \(error)\n")
                return .unavailable
            }
            credentials = RedisV2CredentialStore(client: redis!, softwareStatement: statement)
        }
        defer { redis?.close() }
        let transport = HTTPV2Transport(baseURL: adobe)
        let registered = RegisteredFlag()
        do {
            let stored = try await credentials.credentials(replacing: nil) { () async throws(BackendError) -> V2ClientCredentials in
                registered.set()
                return try await V2Client.register(statement, on: transport)
            }
            print(registered.isSet ? "registered: client id \(stored.clientID)" : "already registered: client id \(stored.clientID)")
            return .success
        } catch {
            StandardError.write("entitle register: \(error.summary)\n")
            return .failure
        }
    }

    /// The statement, trimmed; nil (after saying why) when it cannot be read.
    private func readStatement() -> String? {
        let data = statementFile == "-" ? FileHandle.standardInput.readDataToEndOfFile() : FileManager.default.contents(atPath: statementFile)
        guard let data else {
            StandardError.write("entitle register: cannot read the software statement at \(statementFile)\n")
            return nil
        }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}

/// Whether the registration ran (set from the store's registering closure).
private final class RegisteredFlag: Sendable {
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}
