import EntitlementEngine
import EntitlementSimulator
import EntitlementTestSupport
import Testing

/// The simulator's client registration: credentials for a known software statement, access tokens
/// that expire, and the 401 every API request without a valid bearer gets.
@Suite("Simulated client registration (REST API V2 dynamic client registration)")
struct SimulatedClientRegistrarTests {
    @Test func registerThenTokenThenBearerUntilItExpires() async throws {
        let clock = ManualClock()
        let registrar = SimulatedClientRegistrar(clock: clock, random: SeededRandomSource(seed: 5))
        let registered = try #require(registrar.answer(.registerClient(softwareStatement: SimulatedClientRegistrar.softwareStatement, redirectURI: nil)))
        expectEqual(registered.status, 201)
        let credentials = try V2ClientCredentials(json: try #require(registered.body))
        let issued = try #require(registrar.answer(.accessToken(clientID: credentials.clientID, clientSecret: credentials.clientSecret)))
        expectEqual(issued.status, 201)
        let token = try V2AccessToken(json: try #require(issued.body))
        #expect(token.expiresInSeconds == 21_600 && token.tokenType == "bearer")
        #expect(registrar.refusal(bearer: token.accessToken) == nil)
        await clock.advance(by: .seconds(21_600))
        let expired = try #require(registrar.refusal(bearer: token.accessToken))
        expectEqual(expired.status, 401)
        try expectEqual(V2EnhancedError(json: try #require(expired.body)).action, .applicationRegistration)
        expectEqual(registrar.refusal(bearer: nil)?.status, 401)
    }

    @Test func oauthErrorsForBadStatementsAndClients() throws {
        let registrar = SimulatedClientRegistrar(clock: ManualClock(), random: SeededRandomSource(seed: 5))
        expectEqual(registrar.answer(.registerClient(softwareStatement: "forged", redirectURI: nil)), .oauthError("invalid_software_statement"))
        expectEqual(registrar.answer(.accessToken(clientID: "nobody", clientSecret: "x")), .oauthError("invalid_client"))
        let registered = try #require(registrar.answer(.registerClient(softwareStatement: SimulatedClientRegistrar.softwareStatement, redirectURI: nil)))
        let credentials = try V2ClientCredentials(json: try #require(registered.body))
        expectEqual(registrar.answer(.accessToken(clientID: credentials.clientID, clientSecret: "wrong")), .oauthError("invalid_client"))
        registrar.revoke(softwareStatement: SimulatedClientRegistrar.softwareStatement)
        #expect(registrar.answer(.registerClient(softwareStatement: SimulatedClientRegistrar.softwareStatement, redirectURI: nil))
            == .oauthError("invalid_software_statement"))
        #expect(registrar.answer(.profiles(serviceProvider: "s")) == nil, "only registration requests are its business")
    }
}
