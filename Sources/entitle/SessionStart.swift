import EntitlementEngine
import EntitlementSimulator

/// `entitle session-start DIR`: one engine instance on a file store in DIR starts a login; the
/// simulated user logs in; the final redirect URL is printed instead of being handed to this engine,
/// then the simulated service's state (the session and the profile the login saved), and the
/// process ends. The two-process test hands both to an engine and a simulator in another process.
enum SessionStart {
    static func run(folder: String) async -> Int32 {
        guard let storage = try? FileTokenStorage(folder: folder) else { return 2 }
        let session = SimulatedSession(seed: 11, storage: storage)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        await session.settle()
        guard let login = session.lastNavigation else { return 1 }
        let visit = await session.userAgent.logIn(at: login, username: "alice", password: "wonderland")
        guard let redirect = visit.appURL else { return 1 }
        print(redirect)
        print(await session.simulator.exportedState())
        return 0
    }
}
