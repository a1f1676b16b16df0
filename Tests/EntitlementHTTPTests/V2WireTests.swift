import EntitlementEngine
import EntitlementHTTPServer
import EntitlementSupport
import EntitlementTestSupport
import Testing

@testable import EntitlementHTTP
@testable import EntitlementSimulatorServer

/// What the HTTP client writes is what the simulator's server reads: every V2 request, with every
/// header, crosses the wire and comes back equal; and only documented headers are sent.
@Suite("REST API V2 on the wire: client and server agree")
struct V2WireTests {
    static let info = V2DeviceInfo(
        model: "AppleTV", version: "6,2", osName: "tvOS", osVersion: "18.1", connectionType: "LAN", primaryHardwareType: "SetTopBox",
        connectionIP: "203.0.113.7", connectionPort: 51_234)

    static let requests: [V2Request] = [
        .registerClient(softwareStatement: "statement.eyJ", redirectURI: nil),
        .accessToken(clientID: "client-1", clientSecret: "secret+/=&x"),
        .configuration(serviceProvider: "REF30"),
        .createSession(serviceProvider: "REF30", mvpd: "Cablevision", domainName: "adobe.com", redirectURL: "http://127.0.0.1:9/done?x=1&y=ü"),
        .createSession(serviceProvider: "REF30", mvpd: "Cablevision", domainName: "adobe.com", redirectURL: nil),
        .resumeSession(serviceProvider: "REF30", code: "ABCD2345", mvpd: nil, domainName: nil, redirectURL: "https://x.example/r"),
        .session(serviceProvider: "REF30", code: "ABCD2345"),
        .profiles(serviceProvider: "REF30"),
        .profile(serviceProvider: "REF30", mvpd: "Cable vision/ü"),
        .profileByCode(serviceProvider: "REF30", code: "ABCD2345"),
        .authorize(serviceProvider: "REF30", mvpd: "Cablevision", resources: ["sports-live"]),
        .preauthorize(serviceProvider: "REF30", mvpd: "Cablevision", resources: ["a", "b", "<rss>"]),
        .logout(serviceProvider: "REF30", mvpd: "Cablevision", redirectURL: "http://127.0.0.1:9/done?a=b&c=d"),
        .partnerSession(serviceProvider: "REF30", partner: "Apple", domainName: "adobe.com", redirectURL: "app://x"),
        .partnerProfile(serviceProvider: "REF30", partner: "Apple", samlResponse: "PHNhbWw+Li4uPC9zYW1sPg=="),
    ]

    /// The HTTP request a transport sends for `request`, as the server's parser hands it over.
    static func sent(_ request: V2Request, _ context: V2RequestContext) throws -> HTTPRequest {
        let outgoing = HTTPV2Transport.outgoing(request, context: context, baseURL: "http://127.0.0.1:8080")
        let target = String(outgoing.url.dropFirst("http://127.0.0.1:8080".count))
        var headers = HTTPHeaders([("Host", "127.0.0.1:8080")])
        for (name, value) in outgoing.headers.sorted(by: { $0.key < $1.key }) { headers.add(name, value) }
        if !outgoing.body.isEmpty { headers.add("Content-Length", String(outgoing.body.count)) }
        // Through the real parser, bytes and all.
        var wire = "\(outgoing.method) \(target) HTTP/1.1\r\n"
        for field in headers { wire += "\(field.name): \(field.value)\r\n" }
        var parser = HTTPRequestParser()
        parser.append(Array((wire + "\r\n").utf8) + outgoing.body)
        guard case .request(let parsed) = try parser.next() else { throw WireError.incomplete }
        return parsed
    }

    enum WireError: Error { case incomplete }

    @Test(arguments: requests)
    func everyRequestCrossesTheWireUnchanged(request: V2Request) throws {
        let context = V2RequestContext(
            bearer: "access.abc", deviceID: "device ü/1", forwardedFor: "203.0.113.7", deviceInfo: Self.info, visitorID: "ecid-1",
            tempPassIdentity: "eyJlbWFpbCI6ImFAYi5jIn0=")
        let http = try Self.sent(request, context)
        guard case .api(let read, let readContext) = V2HTTPRoute.read(http) else {
            Issue.record("the server did not read \(request.operation) as an API request")
            return
        }
        expectEqual(read, request)
        // The server sees exactly the headers this endpoint documents.
        let expected = V2RequestContext(
            bearer: request.needsAccessToken ? context.bearer : nil,
            deviceID: request.deviceIdentifier == .notSent ? nil : context.deviceID,
            forwardedFor: request.needsAccessToken ? context.forwardedFor : nil,
            deviceInfo: request.deviceInfo == .notSent ? nil : context.deviceInfo,
            visitorID: request.needsAccessToken ? context.visitorID : nil,
            tempPassIdentity: request.acceptsTempPassIdentity ? context.tempPassIdentity : nil)
        expectEqual(readContext, expected)
    }

    @Test(arguments: requests)
    func onlyDocumentedHeadersAreSent(request: V2Request) {
        let context = V2RequestContext(
            bearer: "b", deviceID: "d", forwardedFor: "203.0.113.7", deviceInfo: Self.info, visitorID: "v", tempPassIdentity: "t")
        let outgoing = HTTPV2Transport.outgoing(request, context: context, baseURL: "https://sp.auth.adobe.com")
        let documented: Set = [
            "Accept", "Content-Type", "Authorization", "AP-Device-Identifier", "X-Device-Info", "X-Forwarded-For",
            "AP-Visitor-Identifier", "AP-TempPass-Identity",
        ]
        #expect(Set(outgoing.headers.keys).isSubset(of: documented))
        expectEqual(outgoing.headers["Authorization"], (request.needsAccessToken ? "Bearer b" : nil))
        expectEqual(outgoing.headers["AP-Device-Identifier"], (request.deviceIdentifier == .notSent ? nil : "fingerprint ZA=="))
        expectEqual(outgoing.headers["Content-Type"], request.body?.contentType)
    }

    @Test func deviceInfoIsBase64JSONWithV2sKeys() throws {
        let value = Self.info.headerValue
        let json = try JSONReader.read(String(decoding: try #require(Base64.decode(value)), as: UTF8.self))
        expectEqual(json["model"]?.string, "AppleTV")
        expectEqual(json["connectionIp"]?.string, "203.0.113.7")
        expectEqual(json["connectionPort"], .int(51_234))
        try expectEqual(V2DeviceInfo(headerValue: value), Self.info)
        #expect(throws: V2DecodingError.self) { try V2DeviceInfo(headerValue: "not base64!") }
    }

    @Test(arguments: [
        ("POST", "/api/v2/REF30/nowhere", "", "", 404),
        ("POST", "/api/v2/REF30/decisions/authorize/Cablevision", "application/json", #"{"resources":[]}"#, 400),
        ("POST", "/api/v2/REF30/sessions", "application/json", "{}", 400),
        ("GET", "/api/v2/REF30/profiles", "", "", 400),
    ])
    func requestsTheServiceWouldRefuseAreRefused(method: String, target: String, type: String, body: String, status: Int) {
        var headers = HTTPHeaders([("Host", "x")])
        if !type.isEmpty { headers.add("Content-Type", type) }
        if status == 400, target.hasSuffix("profiles") { headers.add("AP-Device-Identifier", "fingerprint ***") }
        let request = HTTPRequest(method: method, target: target, headers: headers, body: Array(body.utf8))
        guard case .refused(let answer) = V2HTTPRoute.read(request) else {
            Issue.record("not refused")
            return
        }
        expectEqual(answer.status, status)
    }

    /// A method a V2 path does not take is 405 with `Allow` naming the ones it does; POST on the
    /// authenticate URL (a page for the browser) too.
    @Test(arguments: [
        ("GET", "/api/v2/REF30/sessions", ["POST"]), ("DELETE", "/api/v2/REF30/sessions/ABC123", ["GET", "POST"]),
        ("POST", "/api/v2/REF30/configuration", ["GET"]), ("PUT", "/api/v2/REF30/profiles/code/ABC", ["GET"]),
        ("GET", "/api/v2/REF30/decisions/preauthorize/m", ["POST"]), ("GET", "/o/client/token", ["POST"]),
    ])
    func aMethodAPathDoesNotTakeIs405WithAllow(method: String, target: String, allowed: [String]) {
        let request = HTTPRequest(method: method, target: target, headers: HTTPHeaders([("Host", "x")]), body: [])
        guard case .methodNotAllowed(let read) = V2HTTPRoute.read(request) else {
            Issue.record("\(method) \(target) is not 405")
            return
        }
        expectEqual(read, allowed)
    }
}
