import EntitlementEngine
import EntitlementSimulator
import EntitlementTracing
import Synchronization
import EntitlementTestSupport
import Testing

/// The provider chain on the real engine: order and fallback, the request deadline, a provider that
/// never answers its verification, chains refused at construction, and traces that replay.
@Suite("Provider chain", .checksExactlyOnce)
struct ProviderChainTests {
    /// A provider whose answers a test scripts, and which can be made to never answer.
    final class ScriptedProvider: EntitlementProvider {
        let id: String
        let requestsOneAtATime = false
        private let state: Mutex<(view: ProviderView, silent: Bool, asked: Int, verified: Int)>

        init(id: String, grants: Set<String>) {
            self.id = id
            state = Mutex((ProviderView(resources: grants), false, 0, 0))
        }

        var asked: Int { state.withLock { $0.asked } }
        var verified: Int { state.withLock { $0.verified } }
        func goSilent() { state.withLock { $0.silent = true } }
        func speakAgain() { state.withLock { $0.silent = false } }

        func verify(_ session: ProviderSession) async -> Result<ProviderView, ProviderFailure> {
            let (view, silent) = state.withLock { state in
                state.verified += 1
                return (state.view, state.silent)
            }
            if silent { await Self.never() }
            return .success(view)
        }

        func credentials(for resource: String, _ session: ProviderSession) async -> Result<ProviderCredentials, ProviderFailure> {
            let silent = state.withLock { state in
                state.asked += 1
                return state.silent
            }
            if silent { await Self.never() }
            return .success(ProviderCredentials(token: "\(id)-\(resource)-for-\(session.deviceID)"))
        }

        /// Suspends until cancelled (the engine cancels a request whose deadline passed).
        static func never() async {
            while !Task.isCancelled { try? await Task.sleep(for: .milliseconds(5)) }
        }
    }

    /// An engine on the simulator with `links` as its chain.
    func engine(_ links: [ProviderChain.Link], recorder: TraceRecorder? = nil) throws -> (AccessEnabler, ManualClock, Simulator) {
        let clock = ManualClock()
        let simulator = Simulator(world: .default, clock: clock, seed: 101)
        let enabler = AccessEnabler(
            backend: simulator.backend, environment: .deterministic(clock: clock), settings: .simulated, recorder: recorder,
            providers: try ProviderChain(links))
        return (enabler, clock, simulator)
    }

    @Test func theFirstLinkThatClaimsAnswersAndTheLastIsTheFallback() async throws {
        let first = ScriptedProvider(id: "first", grants: ["a", "b"])
        let second = ScriptedProvider(id: "second", grants: ["b", "c"])
        let (enabler, _, _) = try engine([.provider(first), .provider(second)])
        try await expectEqual(enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: [])), .setRequestorComplete(success: true))
        try await expectEqual(enabler.answer(to: .getAuthorization(resource: "b", data: [:])), .setToken(token: "first-b-for-device-1", resource: "b"))
        try await expectEqual(enabler.answer(to: .getAuthorization(resource: "c", data: [:])), .setToken(token: "second-c-for-device-1", resource: "c"))
        // Nobody claims "z": the last link answers (a scripted provider gives what it is asked for).
        try await expectEqual(enabler.answer(to: .getAuthorization(resource: "z", data: [:])), .setToken(token: "second-z-for-device-1", resource: "z"))
        #expect(first.asked == 1 && second.asked == 2)
        try await expectEqual(enabler.answer(to: .checkPreauthorizedResources(["a", "c", "z"], cache: true)), .preauthorizedResources(["a", "c"]))
    }

    @Test func aProviderThatNeverAnswersFailsAtTheRequestDeadline() async throws {
        let silent = ScriptedProvider(id: "silent", grants: ["a"])
        let (enabler, clock, _) = try engine([.provider(silent), .tvProvider])
        try await expectEqual(enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: [])), .setRequestorComplete(success: true))
        silent.goSilent()
        let pending = Task { try await enabler.answer(to: .getAuthorization(resource: "a", data: [:])) }
        while silent.asked == 0 { await Task.yield() }
        await clock.advance(by: .seconds(31))
        #expect(
            try await pending.value
                == .tokenRequestFailed(resource: "a", errorCode: ErrorCode.providerNetworkFailure, errorDescription: "We were unable to connect to the network."))
        await enabler.whenIdle()
    }

    @Test func aVerificationThatNeverAnswersKeepsTheLastViewAndSetRequestorCompletes() async throws {
        let silent = ScriptedProvider(id: "silent", grants: ["a"])
        let (enabler, clock, _) = try engine([.provider(silent), .tvProvider])
        try await expectEqual(enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: [])), .setRequestorComplete(success: true))
        silent.goSilent()
        let stream = await enabler.callbacks()
        let pending = Task { try await enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: [])) }
        while silent.verified < 2 { await Task.yield() }
        await clock.advance(by: .seconds(31))
        try await expectEqual(pending.value, .setRequestorComplete(success: true))
        var seen: [String] = []
        for await callback in stream {
            seen.append(callback.name == "status" ? "status \(callback)" : callback.name)
            if callback.name == "setRequestorComplete" { break }
        }
        expectEqual(seen.first?.contains(ErrorCode.providerVerificationFailed), true, "\(seen)")
        #expect(!seen.contains("entitlementsChanged"), "the last view stands: nothing changed")
        // The view verified before still answers.
        silent.speakAgain()
        try await expectEqual(enabler.answer(to: .checkPreauthorizedResources(["a"], cache: true)), .preauthorizedResources(["a"]))
    }

    @Test func chainsAreRefusedWhenEmptyOrWithDuplicateOrBadIDs() {
        let a = ScriptedProvider(id: "a", grants: [])
        #expect(throws: ProviderChain.Refusal.empty) { try ProviderChain([]) }
        #expect(throws: ProviderChain.Refusal.duplicateID("a")) { try ProviderChain([.provider(a), .provider(a)]) }
        #expect(throws: ProviderChain.Refusal.duplicateID("tv-provider")) { try ProviderChain([.tvProvider, .tvProvider]) }
        #expect(throws: ProviderChain.Refusal.invalidID("")) { try ProviderChain([.provider(ScriptedProvider(id: "", grants: []))]) }
        let long = String(repeating: "x", count: 65)
        #expect(throws: ProviderChain.Refusal.invalidID(String(long.prefix(64)))) {
            try ProviderChain([.provider(ScriptedProvider(id: long, grants: []))])
        }
    }

    @Test func aSessionWithAChainRecordsATraceThatReplaysAndHoldsNoCredential() async throws {
        let store = ScriptedProvider(id: "store", grants: ["a"])
        let recorder = TraceRecorder()
        let (enabler, _, _) = try engine([.provider(store), .tvProvider], recorder: recorder)
        _ = try await enabler.answer(to: .setRequestor(requestorID: "sim-requestor", serviceProviders: []))
        try await expectEqual(enabler.answer(to: .getAuthorization(resource: "a", data: [:])), .setToken(token: "store-a-for-device-1", resource: "a"))
        _ = try await enabler.answer(to: .checkPreauthorizedResources(["a", "b"], cache: false))
        await enabler.whenIdle()
        let text = recorder.trace.text
        #expect(!text.contains("store-a-for-device-1"), "credentials are concealed")
        #expect(text.contains("\"out\":\"provider\""), "the provider request is recorded")
        let replay = TraceReplayer().replay(try Trace.parse(text))
        #expect(replay.divergence == nil, "\(replay.divergence?.description ?? "")")
        #expect(replay.recordsReplayed > 5)
    }
}
