import EntitlementEngine
import EntitlementRedis
import EntitlementSimulator
import Foundation

/// `entitle session-start DIR|redis:PORT [--stay]`: one engine instance on a file store in DIR (or
/// on Redis at 127.0.0.1:PORT) starts a login; the simulated user logs in; the final redirect URL is
/// printed instead of being handed to this engine, then the simulated service's state (the session
/// and the profile the login saved). Without `--stay` the process ends; with it, the node stays up
/// in the middle of its login until it is killed. The two-process tests hand both to an engine and a
/// simulator in another process — another node.
enum SessionStart {
    static func run(store: String, stay: Bool) async -> Int32 {
        let clock = ManualClock()
        let storage: any TokenStorage
        var client: RedisClient?
        if store.hasPrefix("redis:") {
            guard let port = UInt16(store.dropFirst(6)) else { return 2 }
            client = RedisClient(RedisConfiguration(port: port))
            storage = RedisTokenStorage(client: client!, now: { clock.now() })
        } else {
            guard let files = try? FileTokenStorage(folder: store) else { return 2 }
            storage = files
        }
        let session = SimulatedSession(seed: 11, storage: storage, clock: clock)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        await session.settle()
        guard let login = session.lastNavigation else { return 1 }
        let visit = await session.userAgent.logIn(at: login, username: "alice", password: "wonderland")
        guard let redirect = visit.appURL else { return 1 }
        print(redirect)
        print(await session.simulator.exportedState())
        fflush(nil)
        if stay {
            while true { try? await Task.sleep(for: .seconds(3600)) }
        }
        client?.close()
        return 0
    }
}
