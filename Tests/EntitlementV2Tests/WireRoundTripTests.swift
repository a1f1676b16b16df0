import EntitlementV2
import EntitlementTestSupport
import Testing

/// Both directions of the wire agree: every request a client builds (``V2OutgoingRequest``) reads back,
/// on the service's side (``V2IncomingRequest``), as the same request with the context its headers carry —
/// through public API alone.
@Suite("REST API V2: what a client sends, a service reads back")
struct WireRoundTripTests {
    static let requests: [V2Request] = [
        .registerClient(softwareStatement: "statement.jwt", redirectURI: "adobepass://ios.app"),
        .registerClient(softwareStatement: "statement.jwt", redirectURI: nil),
        .accessToken(clientID: "client id", clientSecret: "s3cr+t/="),
        .configuration(serviceProvider: "requestor"),
        .createSession(serviceProvider: "requestor", mvpd: "acme", domainName: "app.example", redirectURL: "adobepass://ios.app?state=a b&mvpd=acme"),
        .createSession(serviceProvider: "requestor", mvpd: nil, domainName: nil, redirectURL: nil),
        .resumeSession(serviceProvider: "requestor", code: "C0DE", mvpd: "acme", domainName: "app.example", redirectURL: "adobepass://ios.app"),
        .session(serviceProvider: "requestor", code: "C0DE"),
        .profiles(serviceProvider: "requestor"),
        .profile(serviceProvider: "requestor", mvpd: "acme"),
        .profileByCode(serviceProvider: "requestor", code: "C0DE"),
        .authorize(serviceProvider: "requestor", mvpd: "acme", resources: ["news-channel"]),
        .preauthorize(serviceProvider: "requestor", mvpd: "acme", resources: ["a", "b/c", "<rss version=\"2.0\"/>"]),
        .logout(serviceProvider: "requestor", mvpd: "acme", redirectURL: "adobepass://ios.app?state=x&y=1"),
        .partnerSession(serviceProvider: "requestor", partner: "Apple", domainName: "app.example", redirectURL: "adobepass://ios.app"),
        .partnerProfile(serviceProvider: "requestor", partner: "Apple", samlResponse: "PHNhbWw+"),
    ]

    static let context = V2RequestContext(
        bearer: "access-token", deviceID: "device ü/1", forwardedFor: "203.0.113.7",
        deviceInfo: V2DeviceInfo(model: "Apple TV", version: "4K", osName: "tvOS", osVersion: "26.1", connectionType: "WiFi"),
        visitorID: "visitor", tempPassIdentity: "identity")

    @Test(arguments: requests)
    func aRequestReadsBackAsItself(request: V2Request) throws {
        let outgoing = V2OutgoingRequest(request, context: Self.context, baseURL: "https://sp.auth.adobe.com")
        let reading = V2IncomingRequest(outgoing).read()
        guard case .api(let read, let context) = reading else {
            Issue.record("\(request.operation) read as \(reading)")
            return
        }
        expectEqual(read, request)
        // Each part of the context arrives exactly when its header was sent, as it was sent.
        let sent = Self.context
        expectEqual(context.bearer, (outgoing.headers["Authorization"] == nil ? nil : sent.bearer))
        expectEqual(context.deviceID, (outgoing.headers["AP-Device-Identifier"] == nil ? nil : sent.deviceID))
        expectEqual(context.deviceInfo, (outgoing.headers["X-Device-Info"] == nil ? nil : sent.deviceInfo))
        expectEqual(context.forwardedFor, (outgoing.headers["X-Forwarded-For"] == nil ? nil : sent.forwardedFor))
        expectEqual(context.visitorID, (outgoing.headers["AP-Visitor-Identifier"] == nil ? nil : sent.visitorID))
        expectEqual(context.tempPassIdentity, (outgoing.headers["AP-TempPass-Identity"] == nil ? nil : sent.tempPassIdentity))
    }

    @Test func whatIsNotAnOperationIsRefusedAsTheServiceWould() {
        expectEqual(V2IncomingRequest(method: "GET", path: "/api/v2/requestor/nothing").read().refusalStatus, 404)
        expectEqual(V2IncomingRequest(method: "DELETE", path: "/api/v2/requestor/sessions").read(), .methodNotAllowed(allowed: ["POST"]))
        expectEqual(V2IncomingRequest(method: "GET", path: "/api/v2/authenticate/requestor/C0DE").read(), .web, "the login page")
        let noDevice = V2IncomingRequest(method: "GET", path: "/api/v2/requestor/profiles", headers: [("Authorization", "Bearer t")])
        expectEqual(noDevice.read().refusalStatus, 400)
        let badDevice = V2IncomingRequest(
            method: "GET", path: "/api/v2/requestor/profiles", headers: [("ap-device-identifier", "fingerprint !!")])
        expectEqual(badDevice.read().refusalStatus, 400, "header names are read without regard to case")
    }

    /// Forms are read as Adobe's contract describes them — each field a string, the partner session's
    /// `domainName` and `redirectUrl` required — so a body the contract forbids is refused, not guessed at.
    @Test func aFormTheContractForbidsIsRefused() {
        func post(_ path: String, _ body: String) -> V2IncomingRequest.Reading {
            V2IncomingRequest(
                method: "POST", path: "/api/v2/requestor/\(path)",
                headers: [("Authorization", "Bearer t"), ("AP-Device-Identifier", "fingerprint ZGV2aWNl"),
                          ("Content-Type", "application/x-www-form-urlencoded")],
                body: Array(body.utf8)
            ).read()
        }
        for path in ["sessions", "sessions/C0DE"] {
            expectEqual(post(path, "mvpd=acme&mvpd=other").refusalStatus, 400, "\(path): a field given twice is a list")
            expectEqual(post(path, "mvpd=acme%2").refusalStatus, 400, "\(path): a bad escape")
            expectEqual(post(path, "mvpd=%FF").refusalStatus, 400, "\(path): not UTF-8")
            #expect(post(path, "mvpd=acme&domainName=a.example").refusalStatus == nil)
        }
        expectEqual(post("sessions/sso/apple", "redirectUrl=x").refusalStatus, 400, "domainName is required")
        expectEqual(post("sessions/sso/apple", "domainName=a.example").refusalStatus, 400, "redirectUrl is required")
        #expect(post("sessions/sso/apple", "domainName=a.example&redirectUrl=x").refusalStatus == nil)
        expectEqual(post("profiles/sso/apple", "SAMLResponse=a&SAMLResponse=b").refusalStatus, 400)
    }
}

extension V2IncomingRequest.Reading {
    fileprivate var refusalStatus: Int64? {
        if case .refused(let response) = self { return Int64(response.status) }
        return nil
    }
}
