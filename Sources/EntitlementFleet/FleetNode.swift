import EntitlementCommandLine
import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementHost
import EntitlementProviders
import EntitlementRedis
import EntitlementSimulator
import EntitlementSimulatorServer
import Foundation
import Synchronization

/// `entitle fleet-node`: one backend node of `entitle fleet`'s fleet (not in help). A `SessionHost` on
/// REST API V2 over HTTP (the simulator `entitle fleet` serves) and a `RedisTokenStorage`, behind a
/// small HTTP API a device's requests reach through the harness's "load balancer":
///
/// - `GET /health` → 200.
/// - `POST /devices/ID/call` with a call (`checkAuthentication`, `getAuthentication`,
///   `setSelectedProvider MVPD`, `handleExternalURL URL`, `getAuthorization RESOURCE`, `logout`,
///   `completeStepUp RESOURCE succeeded|failed`, `signIn PROVIDER username=U password=P`,
///   `signOut PROVIDER`) → the
///   callbacks this node emitted for the device while the call ran, one per line
///   (`name<TAB>detail<TAB>answered call ids`), once the session settled — with `?until=answered`, once
///   the call was answered too (it may wait for another node, as a request waiting for a renewal
///   another node runs does) — at most 25 s.
///
/// Every accepted call and every answer is appended to the node's event log (`--log`), without a
/// secret (call and callback names, codes and call ids), so the harness can check exactly-once even
/// after the node was killed. SIGTERM shuts the host down (2 s grace: busy sessions' calls answered).
package enum FleetNode {
    /// Serves the node until SIGTERM; its exit status.
    package static func run(redisPort: UInt16, cluster: Bool, adobe: String, port: UInt16, log path: String) async -> ExitStatus {
        guard let events = EventLog(path: path) else {
            StandardError.write("entitle fleet-node: cannot write \(path)\n")
            return .cannotCreate
        }
        let clock = SystemClock()
        let configuration = RedisConfiguration(port: redisPort, commandTimeout: .seconds(1))
        let redis: any RedisCommandSender = cluster ? RedisClusterClient(configuration) : RedisClient(configuration)
        let storage = LoggedStorage(RedisTokenStorage(client: redis, keyPrefix: "fleet", sealing: TestOnlySealing(key: "fleet")), events: events)
        let transport = HTTPV2Transport(baseURL: adobe, timeout: .seconds(5), pacing: .afterThrottleOnly)
        let client = V2Client(
            transport: transport, softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock,
            tokenFetchTimeout: .seconds(6))
        var engine = EngineSettings(requestTimeout: .seconds(8))
        engine.domainName = SimulatedWorld.appDomain
        engine.storageRetryWindow = .seconds(5)
        let recorder = Recorder(events: events)
        let host = SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(30), providerChoiceTimeout: .seconds(60), engine: engine),
            backend: client, storage: storage, clock: clock, delegate: recorder)
        // TVs (devices named `tv-…`) log in on a second screen (cookbook E), polling every second.
        var tvEngine = engine
        tvEngine.secondScreen = SecondScreen(pollInterval: .seconds(1))
        let tvHost = SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(30), providerChoiceTimeout: .seconds(60), engine: tvEngine),
            backend: client, storage: storage, clock: clock, delegate: recorder)
        // Devices named `pin-…` authorize a PIN-protected resource through the programmer's own service,
        // stepping up (the harness enters the PIN); their step-up lives in the store like every flow.
        var pinEngine = engine
        pinEngine.stepUp = StepUpSettings(resources: [Fleet.protectedResource], timeout: .seconds(10))
        let programmer = ServerAuthorizationProvider(
            id: Fleet.stepUpServer.id, url: SimulatorHTTPApp.programmerURL(baseURL: adobe, serverID: Fleet.stepUpServer.id),
            resources: [Fleet.protectedResource], transport: HTTPProviderTransport(timeout: .seconds(5)))
        let pinHost = SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(30), providerChoiceTimeout: .seconds(60), engine: pinEngine),
            backend: client, storage: storage, clock: clock, delegate: recorder, providers: try? ProviderChain([.provider(programmer)]))
        // Devices named `sub-…` sign in to a direct subscription and read its issues; a token the service
        // calls invalid is renewed once for the fleet.
        let magazine = DirectSubscriptionProvider(
            id: Fleet.subscription.id,
            endpoints: .init(base: SimulatorHTTPApp.securityAPIBase(baseURL: adobe, providerID: Fleet.subscription.id), renews: true),
            transport: HTTPProviderTransport(timeout: .seconds(5)))
        let subHost = SessionHost(
            settings: SessionHostSettings(idleTimeout: .seconds(30), providerChoiceTimeout: .seconds(60), engine: engine),
            backend: client, storage: storage, clock: clock, delegate: recorder, providers: try? ProviderChain([.provider(magazine)]))
        events.write("start \(getpid())")
        let server: HTTPServer
        do {
            server = try HTTPServer(port: port, limits: HTTPServerLimits(shutdownGrace: .seconds(1))) { request in
                await handle(request, hosts: (host, tvHost, pinHost, subHost), recorder: recorder, events: events)
            }
        } catch {
            StandardError.write("entitle fleet-node: \(error)\n")
            return .unavailable
        }
        // A node whose harness is gone (killed, crashed) goes too, rather than linger.
        let parent = getppid()
        Task.detached {
            while getppid() == parent { try? await Task.sleep(for: .seconds(1)) }
            exit(0)
        }
        _ = await TerminationSignals.next(stopWithin: .seconds(20), name: "entitle fleet-node")
        async let web = host.shutdown(gracePeriod: .seconds(2))
        async let tv = tvHost.shutdown(gracePeriod: .seconds(2))
        async let pin = pinHost.shutdown(gracePeriod: .seconds(2))
        async let sub = subHost.shutdown(gracePeriod: .seconds(2))
        let reports = await [web, tv, pin, sub]
        events.write(
            "shutdown settled=\(reports.map(\.settled).reduce(0, +)) busy=\(reports.map(\.stillBusy).reduce(0, +)) "
                + "closed=\(reports.map(\.callsClosed).reduce(0, +))")
        await server.shutdown()
        redis.close()
        return .success
    }

    private static func handle(
        _ request: HTTPRequest, hosts: (web: SessionHost, tv: SessionHost, pin: SessionHost, sub: SessionHost), recorder: Recorder,
        events: EventLog
    ) async -> HTTPResponse {
        if request.path == "/health" { return HTTPResponse(status: 200, body: Array("ok".utf8)) }
        let parts = request.path.split(separator: "/")
        guard request.method == "POST", parts.count == 3, parts[0] == "devices", parts[2] == "call" else {
            return HTTPResponse(status: 404)
        }
        let key = SessionKey(deviceID: String(parts[1]), requestorID: "sim-requestor")
        let host =
            key.deviceID.hasPrefix("tv-") ? hosts.tv : key.deviceID.hasPrefix("pin-") ? hosts.pin : key.deviceID.hasPrefix("sub-") ? hosts.sub : hosts.web
        guard let call = call(String(decoding: request.body, as: UTF8.self)) else { return HTTPResponse(status: 400) }
        let mark = recorder.mark(key)
        let id: CallID
        do {
            id = try await host.call(call, on: key)
        } catch {
            return HTTPResponse(status: 503, body: Array("\(error)".utf8))
        }
        events.write("accepted \(key.deviceID) \(id) \(call.name)")
        let settled = FirstResult<Bool>()
        let wait = Task {
            await host.whenSettled(key)
            settled.offer(true)
        }
        let limit = Task {
            try? await Task.sleep(for: .seconds(25))
            settled.offer(false)
        }
        var quiet = await settled.value(orIfCancelled: false)
        wait.cancel()
        limit.cancel()
        if request.query == "until=answered" {
            let deadline = ContinuousClock.now + .seconds(25)
            while !recorder.answered(id, of: key), ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
            quiet = quiet && recorder.answered(id, of: key)
        }
        let lines = recorder.lines(of: key, since: mark)
        return HTTPResponse(
            status: 200, headers: HTTPHeaders([("X-Call", "\(id.rawValue)"), ("X-Settled", quiet ? "yes" : "no")]),
            body: Array(lines.joined(separator: "\n").utf8))
    }

    /// A call from its line.
    static func call(_ line: String) -> EntitlementCall? {
        let words = line.split(separator: " ", maxSplits: 1).map(String.init)
        switch (words.first, words.count) {
        case ("checkAuthentication", 1): return .checkAuthentication
        case ("getAuthentication", 1): return .getAuthentication(forceAuthn: false, data: [:])
        case ("setSelectedProvider", 1): return .setSelectedProvider(nil)
        case ("setSelectedProvider", 2): return .setSelectedProvider(words[1])
        case ("handleExternalURL", 2): return .handleExternalURL(words[1])
        case ("getAuthorization", 2): return .getAuthorization(resource: words[1], data: [:])
        case ("logout", 1): return .logout
        case ("signIn", 2):
            let parts = words[1].split(separator: " ").map(String.init)
            guard parts.count == 3 else { return nil }
            var credentials: [String: String] = [:]
            for field in parts.dropFirst() {
                let pair = field.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { return nil }
                credentials[pair[0]] = pair[1]
            }
            return .signIn(provider: parts[0], credentials: credentials)
        case ("signOut", 2): return .signOut(provider: words[1])
        case ("completeStepUp", 2):
            let parts = words[1].split(separator: " ").map(String.init)
            guard parts.count == 2, ["succeeded", "failed"].contains(parts[1]) else { return nil }
            return .completeStepUp(resource: parts[0], succeeded: parts[1] == "succeeded")
        default: return nil
        }
    }

    /// Every callback by session (for the API's answers), and each answer in the event log.
    final class Recorder: SessionHostDelegate {
        private let events: EventLog
        private let log = Mutex<[SessionKey: [String]]>([:])

        init(events: EventLog) { self.events = events }

        func session(_ key: SessionKey, emitted callback: Callback, answering calls: [CallID]) {
            let detail: String
            var code = ""
            switch callback {
            case .navigateToUrl(let url): detail = url
            case .setAuthenticationStatus(let status, let errorCode):
                detail = "\(status) \(errorCode)"
                code = errorCode.isEmpty ? "\(status)" : errorCode
            case .setToken(let token, _): detail = token
            case .tokenRequestFailed(_, let errorCode, _):
                detail = errorCode
                code = errorCode
            case .status(let report) where report.code == "REGCODE":
                detail = "REGCODE " + report.message  // the code the TV shows, for the harness's second screen
                code = report.code
            case .status(let report):
                detail = report.code
                code = report.code
            case .providerSignInStatus(_, let signedIn, let errorCode, _):
                detail = signedIn ? "1" : "0 \(errorCode)"
                code = errorCode.isEmpty ? (signedIn ? "1" : "0") : errorCode
            case .stepUpRequired(_, let advice):
                detail = advice.transactionID ?? ""  // the transaction the harness's user enters the PIN for
            default: detail = ""
            }
            log.withLock { $0[key, default: []].append("\(callback.name)\t\(detail)\t\(calls.map { "\($0.rawValue)" }.joined(separator: ","))") }
            if !calls.isEmpty {
                events.write("answered \(key.deviceID) \(calls.map { "\($0)" }.joined(separator: ",")) \(callback.name) \(code)")
            }
        }

        func mark(_ key: SessionKey) -> Int { log.withLock { $0[key]?.count ?? 0 } }

        /// Whether a callback answered call `id` of session `key`.
        func answered(_ id: CallID, of key: SessionKey) -> Bool {
            log.withLock { log in
                (log[key] ?? []).contains { line in
                    line.split(separator: "\t", omittingEmptySubsequences: false).last.map { $0.split(separator: ",").contains(Substring("\(id.rawValue)")) } ?? false
                }
            }
        }

        func lines(of key: SessionKey, since mark: Int) -> [String] {
            log.withLock { log in Array((log[key] ?? []).dropFirst(mark)) }
        }
    }

    /// An append-only file of events, one line each, written at once (a killed node's lines stay).
    final class EventLog: Sendable {
        private let handle: Mutex<FileHandle>

        init?(path: String) {
            if !FileManager.default.fileExists(atPath: path) { _ = FileManager.default.createFile(atPath: path, contents: nil) }
            guard let handle = FileHandle(forWritingAtPath: path) else { return nil }
            handle.seekToEndOfFile()
            self.handle = Mutex(handle)
        }

        func write(_ line: String) {
            handle.withLock { $0.write(Data((line + "\n").utf8)) }
        }
    }

    /// The Redis store, with every save in the node's event log (what it held, never a token or code):
    /// `saved DEVICE OLD→NEW auth=… login=… logout=…`, or `save-failed DEVICE OLD why`.
    final class LoggedStorage: TokenSaveNotifying {
        private let inner: RedisTokenStorage
        private let events: EventLog

        init(_ inner: RedisTokenStorage, events: EventLog) {
            self.inner = inner
            self.events = events
        }

        func load(deviceID: String, requestorID: String) async throws(TokenStorageError) -> VersionedTokens {
            try await inner.load(deviceID: deviceID, requestorID: requestorID)
        }

        func save(_ tokens: StoredTokens, deviceID: String, requestorID: String, replacing expected: StorageVersion)
            async throws(TokenStorageError) -> StorageVersion
        {
            do {
                let version = try await inner.save(tokens, deviceID: deviceID, requestorID: requestorID, replacing: expected)
                events.write(
                    "saved \(deviceID) \(expected.number)→\(version.number) auth=\(tokens.authentication != nil) "
                        + "login=\(tokens.pendingLogin != nil) logout=\(tokens.pendingLogout != nil)")
                return version
            } catch {
                events.write("save-failed \(deviceID) \(expected.number) \(error)")
                throw error
            }
        }

        func version(deviceID: String, requestorID: String) async throws(TokenStorageError) -> StorageVersion {
            try await inner.version(deviceID: deviceID, requestorID: requestorID)
        }

        func authentications(deviceID: String) async throws(TokenStorageError) -> [AuthenticationToken] {
            try await inner.authentications(deviceID: deviceID)
        }

        func observeSaves(_ handler: @escaping @Sendable (String, String) -> Void) -> SaveObservation {
            inner.observeSaves(handler)
        }
    }
}
