import EntitlementEngine
import EntitlementHTTP
import EntitlementHTTPServer
import EntitlementProviders
import EntitlementSimulator
import EntitlementSimulatorServer
import EntitlementTestSupport
import Testing

/// The simulator's programmer service served over HTTP: a PIN-protected resource, its advice, and the
/// step-up page a user's PIN is posted to (`POST /programmer/ID/step-up`).
@Suite("The programmer's step-up page over HTTP")
struct ProgrammerStepUpPageTests {
    @Test func theRightPinApprovesOneRetryAndEveryOtherAnswerIsTyped() async throws {
        var world = SimulatedWorld.default
        var kids = SimulatedWorld.ChainProvider(id: "kids")
        kids.kind = .server
        kids.grants = ["horror-1"]
        kids.pin = "4321"
        kids.pinProtected = ["horror-1"]
        world.chainProviders = [kids]
        let simulator = Simulator(world: world, clock: ManualClock())
        let server = try SimulatorServer(
            listener: try HTTPListener(), service: SimulatedV2Service(simulator: simulator, throttles: false),
            limits: HTTPServerLimits(shutdownGrace: .milliseconds(100)))
        defer { Task { await server.shutdown() } }
        let provider = ServerAuthorizationProvider(
            id: "kids", url: SimulatorHTTPApp.programmerURL(baseURL: server.url, serverID: "kids"), resources: ["horror-1"],
            transport: HTTPProviderTransport.patient)
        var session = ProviderSession(deviceID: "tv-1", requestorID: "sim-requestor", sessionID: "tv-1#1")
        guard case .failure(let failure) = await provider.credentials(for: "horror-1", session), failure.kind == .stepUpRequired,
            let transaction = failure.advice?.transactionID
        else { Issue.record("no step-up advice"); return }
        await expectEqual(simulator.pendingTransaction?.id, transaction)

        let page = SimulatorHTTPApp.stepUpURL(baseURL: server.url, serverID: "kids")
        func post(_ form: String, to url: String = page) async throws -> (Int, String) {
            let request = V2OutgoingRequest(
                operation: "step-up", method: "POST", url: url, headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: Array(form.utf8))
            let answer = try await HTTPProviderTransport.patient.send(request).get()
            return (answer.status, String(decoding: answer.body, as: UTF8.self))
        }
        #expect(try await post("transaction=\(transaction)&pin=0000") == (403, #"{"error":"wrong_pin","message":"The PIN is not right."}"#))
        try await expectEqual(post("transaction=nope&pin=4321").0, 404)
        try await expectEqual(post("pin=4321").0, 400)
        try await expectEqual(post("transaction=\(transaction)&pin=4321", to: page.replacingOccurrences(of: "/kids/", with: "/nobody/")).0, 404)
        #expect(try await post("transaction=\(transaction)&pin=4321") == (200, #"{"approved":true}"#))
        try await expectEqual(post("transaction=\(transaction)&pin=4321").0, 403, "answered once")
        #expect(await simulator.pendingTransaction == nil)

        session.transactionID = transaction
        guard case .success(let credentials) = await provider.credentials(for: "horror-1", session) else {
            Issue.record("the approved retry was refused"); return
        }
        #expect(credentials.token.hasPrefix(#"{"auth":"#))
        await expectEqual(provider.credentials(for: "horror-1", session), .failure(.denied("The transaction was already used.")), "single use")
    }
}
