import EntitlementEngine
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSimulatorServer
import EntitlementSupport
import EntitlementTestSupport
import Testing

/// `entitle serve`'s answers as REST API V2's contract describes them: 405 with `Allow` and V2's error
/// JSON, the access token checked before anything else, the token endpoint's parameters read from the
/// form or the query, JSON bodies with any number.
@Suite("The simulator on HTTP keeps the contract's shape")
struct SimulatorHTTPAppTests {
    let app = SimulatorHTTPApp(
        service: SimulatedV2Service(simulator: Simulator(clock: ManualClock(), seed: 101), throttles: false), baseURL: "http://127.0.0.1:1")

    func respond(_ method: String, _ target: String, _ headers: [(String, String)] = [], body: String = "") async -> HTTPResponse {
        await app.respond(HTTPRequest(method: method, target: target, headers: HTTPHeaders([("Host", "x")] + headers), body: Array(body.utf8)))
    }

    /// An access token from the simulator's registrar, through the HTTP endpoints (the token's
    /// parameters in the query, as the contract declares them).
    func accessToken() async throws -> String {
        let registered = await respond(
            "POST", "/o/client/register", [("Content-Type", "application/json")],
            body: #"{"software_statement":"\#(SimulatedClientRegistrar.softwareStatement)"}"#)
        let client = try JSONReader.read(registered.body)
        let id = try #require(client["client_id"]?.string), secret = try #require(client["client_secret"]?.string)
        let token = await respond(
            "POST", PercentEncoding.url("/o/client/token", query: [("client_id", id), ("client_secret", secret), ("grant_type", "client_credentials")]))
        expectEqual(token.status, 201, "the token endpoint reads its parameters from the query too")
        return try #require(try JSONReader.read(token.body)["access_token"]?.string)
    }

    @Test func aMethodAnOperationDoesNotTakeIs405WithAllowAndV2sErrorJSON() async throws {
        let answer = await respond("GET", "/api/v2/sim-requestor/sessions")
        #expect(answer.status == 405 && answer.headers["Allow"] == "POST")
        expectEqual(answer.headers["Content-Type"]?.hasPrefix("application/json"), true)
        try expectEqual(JSONReader.read(answer.body)["status"], .int(405))
        let page = await respond("POST", "/api/v2/authenticate/sim-requestor/ABC1234")
        #expect(page.status == 405 && page.headers["Allow"] == "GET, HEAD", "the authenticate URL is opened with GET")
        let put = await respond("PUT", "/")
        #expect(put.status == 405 && put.headers["Allow"] == "GET, HEAD, POST")
    }

    @Test func theAccessTokenIsCheckedBeforeTheBodyAndHeaders() async throws {
        let noToken = await respond(
            "POST", "/api/v2/sim-requestor/decisions/authorize/acme-cable", [("Content-Type", "application/json")], body: "{not json")
        expectEqual(noToken.status, 401)
        try expectEqual(JSONReader.read(noToken.body)["code"], "invalid_access_token_client_application")
        let token = try await accessToken()
        let badBody = await respond(
            "POST", "/api/v2/sim-requestor/decisions/authorize/acme-cable",
            [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)"), ("AP-Device-Identifier", "fingerprint ZA==")],
            body: "{not json")
        expectEqual(badBody.status, 400)
        try expectEqual(JSONReader.read(badBody.body)["code"], "invalid_parameter_resources")
        let jsonForForm = await respond(
            "POST", "/api/v2/sim-requestor/sessions", [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)")], body: "{}")
        #expect(jsonForForm.status == 400 && (try? JSONReader.read(jsonForForm.body))?["status"] == .int(400), "a documented 400 with error JSON")
    }

    @Test func aJSONBodyWithFractionsIsRead() async throws {
        let token = try await accessToken()
        let answer = await respond(
            "POST", "/api/v2/sim-requestor/decisions/preauthorize/acme-cable",
            [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)"), ("AP-Device-Identifier", "fingerprint ZA==")],
            body: #"{"resources":["news-channel"],"weight":0.5,"scale":1e3}"#)
        #expect(answer.status != 400, "\(String(decoding: answer.body, as: UTF8.self))")
    }

    /// The second-screen session operations, on the wire: a session created without an MVPD answers
    /// `resume` with what is missing; its status lists what it holds and lacks; resuming it with the
    /// MVPD starts the login with the same code; an unknown code is `invalid_authentication_session`.
    @Test func aSessionWithoutAnMVPDIsResumedOnAnotherScreen() async throws {
        let token = try await accessToken()
        let auth = [("Authorization", "Bearer \(token)")]
        let device = auth + [("AP-Device-Identifier", "fingerprint ZA=="), ("Content-Type", "application/x-www-form-urlencoded")]
        let created = await respond("POST", "/api/v2/sim-requestor/sessions", device, body: "domainName=tv.example")
        expectEqual(created.status, 200)
        let session = try JSONReader.read(created.body)
        #expect(session["actionName"] == "resume" && session["actionType"] == "direct")
        expectEqual(session["missingParameters"], ["mvpd", "redirectUrl"])
        let code = try #require(session["code"]?.string)

        let status = await respond("GET", "/api/v2/sim-requestor/sessions/\(code)", auth)
        expectEqual(status.status, 200)
        let held = try JSONReader.read(status.body)
        #expect(held["existingParameters"]?["domainName"] == "tv.example" && held["missingParameters"] == ["mvpd", "redirectUrl"])
        #expect(held["notAfter"]?.string != nil && held["notBefore"]?.string != nil)

        let partly = await respond(
            "POST", "/api/v2/sim-requestor/sessions/\(code)", auth + [("Content-Type", "application/x-www-form-urlencoded")],
            body: "mvpd=acme-cable")
        let retry = try JSONReader.read(partly.body)
        #expect(retry["actionName"] == "retry" && retry["missingParameters"] == ["redirectUrl"] && retry["code"]?.string == code)
        let resumed = await respond(
            "POST", "/api/v2/sim-requestor/sessions/\(code)", auth + [("Content-Type", "application/x-www-form-urlencoded")],
            body: "redirectUrl=" + PercentEncoding.encode("https://phone.example/done"))
        let login = try JSONReader.read(resumed.body)
        #expect(login["actionName"] == "authenticate" && login["actionType"] == "interactive" && login["code"]?.string == code)
        expectEqual(login["url"]?.string?.hasSuffix("/api/v2/authenticate/sim-requestor/\(code)"), true)

        let unknown = await respond("GET", "/api/v2/sim-requestor/sessions/NOSUCH99", auth)
        #expect(try unknown.status == 400 && JSONReader.read(unknown.body)["code"] == "invalid_authentication_session")
    }

    @Test func decisionsForSeveralResourcesAtOnceAreAnsweredLikeOne() async throws {
        let token = try await accessToken()
        func decide(_ resources: String) async throws -> (Int, JSONValue?) {
            let answer = await respond(
                "POST", "/api/v2/sim-requestor/decisions/authorize/acme-cable",
                [("Content-Type", "application/json"), ("Authorization", "Bearer \(token)"), ("AP-Device-Identifier", "fingerprint ZA==")],
                body: #"{"resources":[\#(resources)]}"#)
            return (answer.status, try JSONReader.read(answer.body)["code"])
        }
        // No one is signed in on this device: the same refusal for one resource and for two (before, the
        // array of two was a 400 saying the simulator lacked a parameter).
        let one = try await decide(#""news-channel""#)
        let two = try await decide(#""news-channel","movies""#)
        #expect(one.0 == two.0 && one.1 == two.1 && one.1 == "authenticated_profile_missing", "\(one) vs \(two)")
    }
}
