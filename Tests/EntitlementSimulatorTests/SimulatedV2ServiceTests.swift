import EntitlementEngine
import EntitlementSimulator
import Testing

/// The simulator answering REST API V2: registration, the bearer check, throttling per device, configuration.
@Suite("Simulated REST API V2 service")
struct SimulatedV2ServiceTests {
    /// A service and a valid bearer for it.
    static func registered(_ clock: ManualClock) throws -> (SimulatedV2Service, String) {
        let service = SimulatedV2Service(clock: clock)
        let context = V2RequestContext(forwardedFor: "198.51.100.7")
        let registration = try #require(service.answer(.registerClient(softwareStatement: SimulatedClientRegistrar.softwareStatement, redirectURI: nil), context: context))
        let credentials = try V2ClientCredentials(json: try #require(registration.body))
        let issued = try #require(service.answer(.accessToken(clientID: credentials.clientID, clientSecret: credentials.clientSecret), context: context))
        return (service, try V2AccessToken(json: try #require(issued.body)).accessToken)
    }

    @Test func theConfigurationListsTheWorldsMVPDs() throws {
        let (service, bearer) = try Self.registered(ManualClock())
        let answer = try #require(service.answer(.configuration(serviceProvider: "sim-requestor"), context: V2RequestContext(bearer: bearer, deviceID: "device-1")))
        #expect(answer.status == 200)
        let configuration = try V2Configuration(json: try #require(answer.body))
        #expect(configuration.mvpds.map(\.id) == ["acme-cable", "bluesky-tv", "coastal-fiber", "delta-satellite"])
        #expect(configuration.mvpds[0].enablePlatformServices && !configuration.mvpds[2].enablePlatformServices)
        let unknown = try #require(service.answer(.configuration(serviceProvider: "nobody"), context: V2RequestContext(bearer: bearer, deviceID: "device-2")))
        #expect(unknown.status == 400)
        #expect(try V2EnhancedError(json: try #require(unknown.body)).code == "invalid_parameter_service_provider")
    }

    @Test func everyAPIRequestNeedsAValidBearer() throws {
        let (service, _) = try Self.registered(ManualClock())
        let answer = try #require(service.answer(.configuration(serviceProvider: "sim-requestor"), context: V2RequestContext(bearer: "forged", deviceID: "d")))
        #expect(answer.status == 401)
    }

    @Test func throttlingIsPerDeviceWithABurstOfTen() async throws {
        let clock = ManualClock()
        let (service, bearer) = try Self.registered(clock)
        let device = V2RequestContext(bearer: bearer, deviceID: "tv", forwardedFor: "203.0.113.9")
        let statuses = (0..<11).map { _ in service.answer(.configuration(serviceProvider: "sim-requestor"), context: device)?.status }
        #expect(statuses == Array(repeating: 200, count: 10) + [429])
        let other = V2RequestContext(bearer: bearer, deviceID: "phone", forwardedFor: "203.0.113.10")
        #expect(service.answer(.configuration(serviceProvider: "sim-requestor"), context: other)?.status == 200, "another device has its own bucket")
        await clock.advance(by: .seconds(1))
        #expect(service.answer(.configuration(serviceProvider: "sim-requestor"), context: device)?.status == 200)
        #expect(service.answer(.configuration(serviceProvider: "sim-requestor"), context: device)?.status == 429)
    }

    @Test func requestsNotModelledYetAreNotAnswered() throws {
        let (service, bearer) = try Self.registered(ManualClock())
        #expect(service.answer(.profiles(serviceProvider: "sim-requestor"), context: V2RequestContext(bearer: bearer, deviceID: "d")) == nil)
    }
}
