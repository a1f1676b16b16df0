import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSimulatorServer
import EntitlementSupport
import Foundation
import Synchronization
import Testing

/// What the engine's client sends on the wire, for the contract: a whole journey (registration, a
/// login whose session is resumed, an authorization, a pre-authorization, a logout; a platform sign-in;
/// a second screen's refused poll and the session status it asks) through `HTTPV2Transport` against the
/// simulator's server, every request as it leaves recorded by the transport's hook. With
/// `ENTITLE_CONTRACT_REQUESTS=FILE` the requests are written there as JSON lines, and `.ci/run`
/// validates each against Adobe's OpenAPI files (`Tests/Contract/check_contract.py --requests FILE`).
@Suite("The client's requests, recorded for the contract check")
struct ClientContractRecordingTests {
    @Test func aWholeJourneysRequestsAreRecorded() async throws {
        let clock = ManualClock()
        let simulator = Simulator(clock: clock, seed: 101)
        let service = SimulatedV2Service(simulator: simulator, throttles: false)
        let listener = try HTTPListener()
        let app = SimulatorHTTPApp(service: service, baseURL: listener.url)
        let server = try HTTPServer(listener: listener) { request in await app.respond(request) }
        let sent = Mutex<[V2OutgoingRequest]>([])
        let transport = HTTPV2Transport(baseURL: server.url, pacing: .afterThrottleOnly, decorate: { request in
            sent.withLock { $0.append(request) }
        })
        // Built without `devices:`: what a backend that describes no device sends.
        let client = V2Client(
            transport: transport, softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock)
        let session = SimulatedSession(clock: clock, simulator: simulator, backend: client)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthentication()
        // The service asks for a parameter again: the session is resumed (`POST sessions/{code}`).
        await simulator.inject(.answerMissingParameters(["redirectUrl"]), into: .createSession)
        await session.enabler.setSelectedProvider("acme-cable")
        _ = await session.logIn(as: "alice", password: "wonderland")
        await session.enabler.getAuthorization("news-channel")
        await session.enabler.checkPreauthorizedResources(["news-channel", "sports-live"], cache: false)
        await session.enabler.logout()
        await session.enabler.whenIdle()
        // A device with a platform account: the partner's request (`sessions/sso/Apple`), then the exchange.
        let device = SimulatedSession(deviceID: "device-2", clock: clock, simulator: simulator, platformSSO: true, backend: client)
        device.platform?.script(.signIn(username: "carol"))
        await device.enabler.setRequestor("sim-requestor")
        await device.enabler.getAuthentication()
        await device.enabler.whenIdle()
        // A TV whose poll is refused: the session's status (`GET sessions/{code}`) is asked.
        var tvSettings = EngineSettings()
        tvSettings.secondScreen = SecondScreen()
        let tv = SimulatedSession(deviceID: "tv-1", settings: tvSettings, clock: clock, simulator: simulator, backend: client)
        await tv.enabler.setRequestor("sim-requestor")
        await tv.enabler.setSelectedProvider("acme-cable")
        await tv.enabler.whenIdle()
        await simulator.inject(.refuse(V2ErrorCatalogue.error("invalid_authentication_session")!), into: .profileByCode)
        await clock.advance(by: SecondScreen().pollInterval)
        await tv.enabler.whenIdle()
        await tv.enabler.closeSession()
        await server.shutdown()

        let requests = sent.withLock { $0 }
        let operations = Set(requests.map(\.operation))
        #expect(
            operations.isSuperset(of: [
                "registerClient", "accessToken", "configuration", "createSession", "resumeSession", "session", "profileByCode",
                "authorize", "preauthorize", "logout", "partnerSession", "partnerProfile",
            ]), "\(operations.sorted())")
        for request in requests where ["registerClient", "accessToken", "createSession", "authorize", "preauthorize", "logout", "partnerSession", "partnerProfile"]
            .contains(request.operation)
        {
            #expect(request.headers["X-Device-Info"] != nil, "\(request.operation) carries X-Device-Info")
        }
        guard let path = ProcessInfo.processInfo.environment["ENTITLE_CONTRACT_REQUESTS"] else { return }
        let lines = requests.map { request -> String in
            let record: JSONValue = [
                "operation": .string(request.operation), "method": .string(request.method), "url": .string(request.url),
                "headers": .object(request.headers.mapValues(JSONValue.string)), "body": .string(Base64.encode(request.body)),
            ]
            return record.canonicalText
        }
        try (lines.joined(separator: "\n") + "\n").write(toFile: path, atomically: true, encoding: .utf8)
    }
}
