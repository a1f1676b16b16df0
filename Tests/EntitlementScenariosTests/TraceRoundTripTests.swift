import EntitlementEngine
import EntitlementScenarios
import EntitlementSimulator
import EntitlementTestSupport
import EntitlementTracing
import Foundation
import Testing

/// Recording and replaying every scenario of the library.
@Suite("Traces: record, replay, byte-identical, no secrets")
struct TraceRoundTripTests {
    static func record(_ file: String) async throws -> (ScenarioResult, Trace) {
        let recorder = TraceRecorder(recordedWith: "entitle record")
        let result = await ScenarioRunner().run(try ScenarioLibrary.load(file), recorder: recorder)
        return (result, recorder.trace)
    }

    @Test(.backgroundThread, arguments: ScenarioLibraryTests.files)
    func everyScenarioReplaysWithZeroDivergence(file: String) async throws {
        let (result, trace) = try await Self.record(file)
        #expect(result.passed)
        let reread = try Trace.parse(trace.text)
        expectEqual(reread, trace, "the canonical text reads back to the same trace")
        let replay = TraceReplayer(checkingRows: true).replay(reread)
        #expect(replay.divergence == nil, "\(replay.divergence?.description ?? "")")
        #expect(replay.effectsNotInRows.isEmpty, "every effect is named by a row of its step:\n\(replay.effectsNotInRows.joined(separator: "\n"))")
        expectEqual(replay.recordsReplayed, trace.records.count)
        #expect(replay.machineMatches)
        // No secret in clear: not one the simulator minted, nor any 43-character base64url run
        // (the shape of every state, verifier and challenge the engine draws or derives).
        let text = trace.text
        for secret in result.secretsMinted {
            #expect(!text.contains(secret), "a minted secret reached the trace: \(Redactor.shorten(secret))")
        }
        #expect(text.firstMatch(of: /[A-Za-z0-9_-]{43}/) == nil, "a state in clear")
        if let failure = result.failure { #expect(!result.secretsMinted.contains { failure.description.contains($0) }) }
    }

    @Test func aSessionOnTheLiveEnvironmentRecordsAndReplays() async throws {
        // Wall clock and the system CSPRNG, as in production: the trace still replays, because the
        // replay feeds the recorded inputs (times, drawn secrets as placeholders) to the machine.
        // Requests may take ten minutes, not the default 30 s: in the whole suite on two cores this test has
        // taken 24–44 s, its requests waiting for threads; a bound far from the behaviour.
        let simulator = Simulator(clock: SystemClock())
        let recorder = TraceRecorder(recordedWith: "production test")
        var settings = EngineSettings.simulated
        settings.requestTimeout = .seconds(600)
        let enabler = AccessEnabler(
            backend: simulator.backend, environment: .live(deviceID: "tv-42"), settings: settings, recorder: recorder)
        await enabler.setRequestor("sim-requestor")
        await enabler.whenIdle()
        await enabler.setSelectedProvider("bluesky-tv")
        await enabler.whenIdle()
        let trace = recorder.trace
        let navigate = try #require(trace.records.last { $0["callback"]?.string == "navigateToUrl" }?["url"]?.string)
        expectEqual(navigate, "https://sp.sim/api/v2/authenticate/sim-requestor/<code#1>")
        let login = await enabler.machineSnapshot
        guard case .login(let flow, .awaitingRedirect) = login.authentication, let secrets = flow.secrets, let code = flow.code else {
            Issue.record("no login waiting")
            return
        }
        let url = "https://sp.sim/api/v2/authenticate/sim-requestor/\(code)"
        let redirect = try #require(await simulator.userAgent.logIn(at: url, username: "carol", password: "carolina").appURL)
        await enabler.handleExternalURL(redirect)
        await enabler.whenIdle()
        await enabler.getAuthorization("movies-hd")
        await enabler.whenIdle()
        let recorded = recorder.trace
        #expect(recorded.records.contains { $0["callback"]?.string == "setToken" })
        #expect(!recorded.text.contains(secrets.state) && !recorded.text.contains(code))
        let replay = TraceReplayer().replay(try Trace.parse(recorded.text))
        #expect(replay.divergence == nil, "\(replay.divergence?.description ?? "")")
    }

    @Test(arguments: [
        ("flow-b-startup", "startup-queues-calls-until-configured"),
        ("flow-c-authentication", "authentication-picker-login-redirect"),
        ("flow-f-authorization", "authorization-fresh-media-token-every-time"),
        ("flow-g-view-media", "view-media-authorizes-only-protected-media"),
        ("flow-h-logout", "logout-clears-tokens-then-follows-the-logout-chain"),
        ("flow-d-platform-sso", "platform-sso-picker-signs-in-without-a-web-view"),
    ])
    func goldenTracesAreFreshRecordingsOfTheirScenarios(trace: String, scenario: String) async throws {
        let root = URL(fileURLWithPath: ScenarioLibraryTests.folder).deletingLastPathComponent()
        let golden = try String(contentsOf: root.appendingPathComponent("Traces/\(trace).complete.jsonl"), encoding: .utf8)
        let recorder = TraceRecorder(recordedWith: "entitle record \(EngineVersion.current)")
        _ = await ScenarioRunner().run(try ScenarioLibrary.load(ScenarioLibraryTests.folder + "/\(scenario).scenario"), recorder: recorder)
        expectEqual(recorder.trace.text, golden, "re-record with: swift run entitle record Tests/Scenarios/\(scenario).scenario -o Tests/Traces/\(trace).complete.jsonl")
    }

    /// Every `status` the library's scenarios make the engine report is in the one list of what `status`
    /// can say — a ``Notice`` (with its level) or a refusal (``CallRefusal``, ``RedirectRefusal``) — so
    /// the list in the code, and the table in the REST API V2 article built from it, cannot drift.
    @Test(.backgroundThread) func everyStatusTheLibraryReportsIsANoticeOrARefusal() async throws {
        let notices = Set(Notice.all.map { "\($0.code) \($0.level.rawValue)" })
        let refusals: Set<String> = [
            "UNKNOWN_PROVIDER", "INVALID_ARGUMENT", "QUEUE_FULL", "LOGOUT_IN_PROGRESS", "ALREADY_AUTHENTICATED",
            "PROFILE_READ_IN_PROGRESS", "REQUESTOR_NOT_CONFIGURED", "P100", "STORAGE_WRITE_FAILED", "NO_PROVIDER_SIGN_IN",
            "PROVIDER_BUSY", "NO_STEP_UP_PENDING", "REDIRECT_MALFORMED", "REDIRECT_URL_MISMATCH", "REDIRECT_DUPLICATE_PARAMETER",
            "REDIRECT_NO_PENDING_FLOW", "REDIRECT_STATE_MISSING", "REDIRECT_STATE_MISMATCH", "REDIRECT_PROVIDER_MISMATCH",
            "REDIRECT_EXPIRED",
        ]
        var seen: Set<String> = []
        for file in ScenarioLibraryTests.files {
            let (_, trace) = try await Self.record(file)
            for record in trace.records where record["callback"]?.string == "status" {
                guard let code = record["code"]?.string, let level = record["level"]?.string else { continue }
                seen.insert(code)
                let known = notices.contains("\(code) \(level)") || (code.hasPrefix("CFG") && level == "error")
                    || (refusals.contains(code) && level == "error")
                #expect(known, "\(file): status \(code) \(level) is neither a Notice nor a refusal")
            }
        }
        #expect(seen.count >= 20, "the library reports the notices: \(seen.sorted())")
    }

    @Test(.backgroundThread, arguments: ScenarioLibraryTests.files)
    func recordingTwiceGivesByteIdenticalTraces(file: String) async throws {
        let first = try await Self.record(file).1.text
        let second = try await Self.record(file).1.text
        expectEqual(first, second)
    }
}
