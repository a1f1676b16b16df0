import EntitlementEngine
import EntitlementFuzzing
import EntitlementSimulator
import Foundation
import EntitlementTestSupport
import Testing

/// Many engine instances (nodes of a fleet) serving one device session on one store, all at once:
/// logins, logouts and authorizations interleave freely. The review saw 2–14 stale overwrites
/// per run of 50 engines before saves became compare-and-sets.
@Suite("Many engines on one store")
struct ConcurrentStoreTests {
    @Test(arguments: [(50, false), (12, true)])
    func fiftyEnginesNeverOverwriteANewerLogin(engines count: Int, onFiles: Bool) async throws {
        let inner: any TokenStorage =
            onFiles ? try FileTokenStorage(folder: ScratchSpace.path("entitle-fleet-")) : InMemoryTokenStorage()
        let storage = ScriptedTokenStorage(inner)
        let clock = ManualClock()
        let first = SimulatedSession(seed: 1, storage: storage, clock: clock)
        let sessions = [first] + (2...count).map {
            SimulatedSession(seed: UInt64($0), storage: storage, clock: clock, simulator: first.simulator)
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, session) in sessions.enumerated() {
                group.addTask { await Self.play(session, seed: UInt64(index + 1)) }
            }
        }
        // Every flow still waiting ends at its deadline; then every call must have been answered once.
        await clock.advance(by: .seconds(660))
        for session in sessions {
            await session.enabler.checkAuthentication()
            await session.settle()
            _ = session.ledger.take()
            let problems = session.ledger.violations()
            #expect(problems.isEmpty, "\(problems.joined(separator: "\n"))")
        }
        // The saves form one chain: each names the version the previous one wrote. (The recorder notes a
        // save after the store returns, so two saves finishing together may be noted in either order:
        // the chain is read in the order of the versions written.)
        let history = storage.history.sorted { $0.written < $1.written }
        for (previous, next) in zip(history, history.dropFirst()) {
            expectEqual(next.expected, previous.written, "a save skipped a version: \(previous.written) → \(next.expected)")
        }
        // A login that a save removed never comes back in a later save (logins told apart by the
        // id of the session that made them).
        var removed: Set<String> = []
        var stored: AuthenticationToken?
        for entry in history {
            if let token = entry.tokens.authentication {
                #expect(!removed.contains(token.sessionID ?? ""), "a removed login was written back")
            }
            if let old = stored, entry.tokens.authentication != old { removed.insert(old.sessionID ?? "") }
            stored = entry.tokens.authentication
        }
        #expect(history.count > count, "the engines wrote (\(history.count) saves)")
    }

    /// One engine's random script: logins, logouts, authorizations, reads.
    static func play(_ session: SimulatedSession, seed: UInt64) async {
        var random = FuzzRandom(seed: seed)
        await session.enabler.setRequestor("sim-requestor")
        await session.settle()
        for _ in 0..<4 {
            switch Int.random(in: 0..<4, using: &random) {
            case 0:
                await session.enabler.getAuthentication()
                await session.enabler.setSelectedProvider("acme-cable")
                await session.settle()
                if let url = session.lastNavigation, url.contains("login") {
                    let visit = await session.userAgent.logIn(at: url, username: "alice", password: "wonderland")
                    if let redirect = visit.appURL { await session.enabler.handleExternalURL(redirect) }
                }
            case 1:
                await session.enabler.logout()
                await session.settle()
                if random.chance(1, in: 2), let url = session.lastNavigation, url.contains("logout"),
                    let back = await session.userAgent.follow(url).appURL
                {
                    await session.enabler.handleExternalURL(back)
                }
            case 2:
                await session.enabler.checkAuthorization("news-channel")
            default:
                await session.enabler.checkAuthentication()
            }
            await session.settle()
        }
    }

    /// The same on the wall clock, with the system's randomness and real request deadlines: 50
    /// engines log in and out at once through the simulator's pages on one file store. The deadlines are
    /// the longest an engine allows (600 s), far from anything the simulator takes: at the default 30 s, a
    /// run whose threads were held for 40 s (as a loaded CI machine's were) ended most logins at their
    /// deadline before they saved, and the verdict was the machine's speed.
    @Test func fiftyEnginesOnTheWallClock() async throws {
        let storage = ScriptedTokenStorage(try FileTokenStorage(folder: ScratchSpace.path("entitle-wall-")))
        let simulator = Simulator(clock: SystemClock())
        var settings = EngineSettings.simulated
        settings.requestTimeout = .seconds(600)
        let engines = (0..<50).map { _ in
            let ledger = CallLedger()
            return (AccessEnabler(
                backend: simulator.backend, storage: storage, environment: .live(deviceID: "device-1"), settings: settings, monitor: ledger), ledger)
        }
        await withTaskGroup(of: Void.self) { group in
            for (index, (enabler, ledger)) in engines.enumerated() {
                group.addTask {
                    await enabler.setRequestor("sim-requestor")
                    await enabler.setSelectedProvider("acme-cable")
                    await enabler.whenIdle()
                    if index % 2 == 0, let url = ledger.callbacks.lastNavigation,
                        let back = await simulator.userAgent.logIn(at: url, username: "alice", password: "wonderland").appURL
                    {
                        await enabler.handleExternalURL(back)
                    } else {
                        await enabler.logout()
                    }
                    await enabler.checkAuthentication()
                    await enabler.whenIdle()
                }
            }
        }
        var unanswered = 0
        for (enabler, ledger) in engines {
            await enabler.whenIdle()
            // Calls still waiting for a redirect (a login another node restarted, a logout page not
            // followed) end at their deadline; everything else is answered exactly once now.
            let problems = ledger.violations().filter { !$0.contains("got no terminal callback") && !$0.contains("nobody checked") }
            #expect(problems.isEmpty, "\(problems)")
            unanswered += ledger.violations().filter { $0.contains("got no terminal callback") }.count
        }
        // One chain of saves, read in the order of the versions written (as above).
        let history = storage.history.sorted { $0.written < $1.written }
        for (previous, next) in zip(history, history.dropFirst()) {
            expectEqual(next.expected, previous.written, "a save skipped a version")
        }
        // The chain above is the verdict; this only says the engines wrote (each login that completes saves).
        #expect(history.count >= 10, "the engines wrote (\(history.count) saves; \(unanswered) calls wait for a redirect)")
    }
}

/// A call's step is taken at once only when nothing runs before it: a call made while another step
/// waits for its save waits its turn in the mailbox.
@Suite("Calls taken at once keep their order")
struct StepAtOnceOrderTests {
    @Test func aCallMadeWhileAStepSavesWaitsForThatStep() async throws {
        let storage = ScriptedTokenStorage()
        let session = SimulatedSession(storage: storage)
        await session.configure()
        let get = await session.enabler.getAuthentication()
        _ = await session.collect()
        // Choosing the provider saves it; hold that save until the next call has been made.
        let (reachedSave, reached) = AsyncStream.makeStream(of: Void.self)
        let (released, release) = AsyncStream.makeStream(of: Void.self)
        storage.beforeNextSave {
            reached.yield()
            for await _ in released { break }
        }
        let select = Task { await session.enabler.setSelectedProvider("acme-cable") }
        for await _ in reachedSave { break }
        let check = Task { await session.enabler.checkAuthentication() }
        // Answered at once, the check would be answered now; it waits behind the held step instead.
        try await Task.sleep(for: .milliseconds(50))
        #expect(session.ledger.take().isEmpty, "a call was answered while the step before it waited for its save")
        release.yield()
        let selected = await select.value
        let checked = await check.value
        _ = await session.collect()
        expectEqual(session.ledger.answers(to: checked), [.setAuthenticationStatus(status: 0, errorCode: "USER_NOT_AUTHENTICATED_ERROR")])
        await session.expectClean(pending: [get, selected])
    }
}
