import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSimulatorServer
import Foundation
import Synchronization
import Testing

/// What the engine's client sends on the wire, for the contract: a whole journey (registration, a
/// login, an authorization, a pre-authorization, a logout) through `URLSessionV2Transport` against the
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
        let transport = URLSessionV2Transport(baseURL: server.url, pacing: .afterThrottleOnly) { request in
            sent.withLock { $0.append(request) }
        }
        // Built without `devices:`: what a backend that describes no device sends.
        let client = V2Client(
            transport: transport, softwareStatement: SimulatedClientRegistrar.softwareStatement, baseURL: "https://sp.sim", clock: clock)
        let session = SimulatedSession(clock: clock, simulator: simulator, backend: client)
        await session.enabler.setRequestor("sim-requestor")
        await session.enabler.getAuthentication()
        await session.enabler.setSelectedProvider("acme-cable")
        _ = await session.logIn(as: "alice", password: "wonderland")
        await session.enabler.getAuthorization("news-channel")
        await session.enabler.checkPreauthorizedResources(["news-channel", "sports-live"], cache: false)
        await session.enabler.logout()
        await session.enabler.whenIdle()
        await server.shutdown()

        let requests = sent.withLock { $0 }
        let operations = Set(requests.map(\.operation))
        #expect(
            operations.isSuperset(of: [
                "registerClient", "accessToken", "configuration", "createSession", "profileByCode", "authorize", "preauthorize", "logout",
            ]), "\(operations.sorted())")
        for request in requests where ["registerClient", "accessToken", "createSession", "authorize", "preauthorize", "logout"]
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
