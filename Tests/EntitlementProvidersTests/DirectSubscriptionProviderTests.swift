import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementProviders
import EntitlementSimulator
import EntitlementSimulatorServer
import EntitlementTracing
import Foundation
import Synchronization
import EntitlementTestSupport
import Testing

/// The direct-subscription provider on the simulator's Security API served over HTTP, and on a real
/// engine: what goes on the wire, and what never reaches a trace.
@Suite("Direct subscription (Pugpig's Security API)")
struct DirectSubscriptionProviderTests {
    static func world() -> SimulatedWorld {
        var world = SimulatedWorld.default
        var magazine = SimulatedWorld.ChainProvider(id: "magazine")
        magazine.kind = .subscription
        magazine.renews = true
        world.chainProviders = [magazine]
        world.subscribers = [
            SimulatedWorld.Subscriber(username: "ann", password: "open sesame", providerID: "magazine", issues: ["issue-1"])
        ]
        return world
    }

    /// The simulator served over HTTP, with every request it received.
    final class Served: Sendable {
        let server: SimulatorServer
        let simulator: Simulator
        let seen = Mutex<[HTTPRequest]>([])
        var base: String { SimulatorHTTPApp.securityAPIBase(baseURL: server.url, providerID: "magazine") }

        init(clock: ManualClock) throws {
            simulator = Simulator(world: DirectSubscriptionProviderTests.world(), clock: clock)
            server = try SimulatorServer(
                listener: try HTTPListener(), service: SimulatedV2Service(simulator: simulator, throttles: false),
                limits: HTTPServerLimits(shutdownGrace: .milliseconds(100)))
        }
    }

    @Test func signInVerifyAndCredentialsOverHTTPWithTheFormInTheBody() async throws {
        let served = try Served(clock: ManualClock())
        defer { Task { await served.server.shutdown() } }
        let provider = DirectSubscriptionProvider(id: "magazine", endpoints: .init(base: served.base), transport: HTTPProviderTransport.patient)
        var session = ProviderSession(deviceID: "tv-1", requestorID: "sim-requestor", sessionID: "tv-1#1")
        await expectEqual(provider.signIn(with: ["username": "ann", "password": "wrong"], session), .failure(.denied("Credentials not recognised")))
        let token = try await provider.signIn(with: ["username": "ann", "password": "open sesame"], session).get()
        session.userToken = token
        await expectEqual(provider.verify(session), .success(ProviderView(resources: ["issue-1"], message: "Your subscription is active.")))
        let credentials = try await provider.credentials(for: "issue-1", session).get()
        #expect(credentials.keep && credentials.token.hasPrefix("Basic "))
        let decoded = String(decoding: Data(base64Encoded: String(credentials.token.dropFirst(6)))!, as: UTF8.self)
        #expect(decoded.hasPrefix("ann:"))
        await expectEqual(provider.credentials(for: "issue-9", session), .failure(.denied("Your subscription does not include issue-9.")))
        await served.simulator.invalidateSubscriptionTokens("magazine")
        await expectEqual(provider.verify(session), .failure(.invalidToken))
        let renewed = try await provider.renew(session).get()
        #expect(renewed != token)
        session.userToken = renewed
        await expectEqual(provider.verify(session), .success(ProviderView(resources: ["issue-1"], message: "Your subscription is active.")))
    }

    @Test func garbageAndSilenceAreTypedFailures() async throws {
        let served = try Served(clock: ManualClock())
        defer { Task { await served.server.shutdown() } }
        let provider = DirectSubscriptionProvider(id: "magazine", endpoints: .init(base: served.base), transport: HTTPProviderTransport.patient)
        let session = ProviderSession(deviceID: "tv-1", requestorID: "sim-requestor", sessionID: "tv-1#1", userToken: "t")
        await served.simulator.failProgrammer("magazine", with: .garbage)
        guard case .failure(let failure) = await provider.verify(session), failure.kind == .unknown, let why = failure.detail else {
            Issue.record("not a typed failure")
            return
        }
        #expect(why.contains("not its XML"))
        await served.simulator.failProgrammer("magazine", with: .status(503))
        await expectEqual(provider.verify(session), .failure(.unknown("the subscription service answered HTTP 503")))
        await served.simulator.failProgrammer("magazine", with: .noAnswer)
        let impatient = DirectSubscriptionProvider(
            id: "magazine", endpoints: .init(base: served.base), transport: HTTPProviderTransport(timeout: .seconds(1)))
        await expectEqual(impatient.verify(session), .failure(.networkFailure))
    }

    /// The password goes to the provider once; neither it nor the user token nor the kept credentials
    /// are in the trace, and the trace replays.
    @Test func aSignInLeavesNoSecretInTheTrace() async throws {
        let served = try Served(clock: ManualClock())
        defer { Task { await served.server.shutdown() } }
        let clock = ManualClock()
        let provider = DirectSubscriptionProvider(id: "magazine", endpoints: .init(base: served.base), transport: HTTPProviderTransport.patient)
        let recorder = TraceRecorder()
        let storage = InMemoryTokenStorage()
        let enabler = AccessEnabler(
            backend: Simulator(clock: clock).backend, storage: storage, environment: .deterministic(clock: clock), settings: .simulated,
            recorder: recorder, providers: try ProviderChain([.provider(provider), .tvProvider]))
        _ = try await enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: []))
        #expect(
            try await enabler.answer(to: .signIn(provider: "magazine", credentials: ["username": "ann", "password": "open sesame"]))
                == .providerSignInStatus(provider: "magazine", signedIn: true, errorCode: "", message: "Your subscription is active."))
        guard case .setToken(let credentials, _) = try await enabler.answer(to: .getAuthorization(resource: "issue-1", data: [:])) else {
            Issue.record("no credentials")
            return
        }
        await enabler.whenIdle()
        let stored = try await storage.load(deviceID: "device-1", requestorID: "sim-requestor").tokens.providerAccounts["magazine"]
        let token = try #require(stored?.userToken)
        expectEqual(stored?.kept["issue-1"], credentials, "kept for good, in storage")
        let text = recorder.trace.text
        for secret in ["open sesame", "open%20sesame", token, credentials, String(credentials.dropFirst(6))] {
            #expect(!text.contains(secret), "a secret in the trace")
        }
        let replay = TraceReplayer().replay(try Trace.parse(text))
        #expect(replay.divergence == nil, "\(replay.divergence?.description ?? "")")
    }
}
