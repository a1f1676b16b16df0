import EntitlementV2
import EntitlementTestSupport
import Testing

/// Each V2 request renders the method, path, query, body and device headers Adobe's REST API V2 pages document.
@Suite("REST API V2 requests")
struct V2RequestTests {
    @Test func createSessionIsAFormWithTheThreeParameters() {
        let request = V2Request.createSession(
            serviceProvider: "REF30", mvpd: "Cablevision", domainName: "adobe.com", redirectURL: "https://app.example/done?x=1")
        #expect(request.method == .post && request.path == "/api/v2/REF30/sessions")
        expectEqual(request.body?.contentType, "application/x-www-form-urlencoded")
        #expect(String(decoding: request.body?.bytes ?? [], as: UTF8.self)
            == "mvpd=Cablevision&domainName=adobe.com&redirectUrl=https%3A%2F%2Fapp.example%2Fdone%3Fx%3D1")
        #expect(request.needsAccessToken && request.deviceIdentifier == .required && request.deviceInfo == .required)
        // A device that cannot supply the parameters leaves them out (the session answers `resume`).
        let bare = V2Request.createSession(serviceProvider: "REF30", mvpd: nil, domainName: nil, redirectURL: nil)
        expectEqual(bare.body, .form([]))
    }

    @Test func decisionsCarryTheResourcesAsJSON() {
        let request = V2Request.authorize(serviceProvider: "REF30", mvpd: "Cablevision", resources: ["sports-live"])
        #expect(request.method == .post && request.path == "/api/v2/REF30/decisions/authorize/Cablevision")
        expectEqual(request.body?.contentType, "application/json")
        expectEqual(String(decoding: request.body?.bytes ?? [], as: UTF8.self), #"{"resources":["sports-live"]}"#)
        expectEqual(V2Request.preauthorize(serviceProvider: "REF30", mvpd: "m", resources: ["a", "b"]).path, "/api/v2/REF30/decisions/preauthorize/m")
    }

    @Test func readsAreGetsWithoutABody() {
        let reads: [(V2Request, String)] = [
            (.configuration(serviceProvider: "REF30"), "/api/v2/REF30/configuration"),
            (.session(serviceProvider: "REF30", code: "8ER640M"), "/api/v2/REF30/sessions/8ER640M"),
            (.profiles(serviceProvider: "REF30"), "/api/v2/REF30/profiles"),
            (.profile(serviceProvider: "REF30", mvpd: "Cablevision"), "/api/v2/REF30/profiles/Cablevision"),
            (.profileByCode(serviceProvider: "REF30", code: "8ER640M"), "/api/v2/REF30/profiles/code/8ER640M"),
        ]
        for (request, path) in reads {
            #expect(request.method == .get && request.path == path && request.body == nil && request.needsAccessToken, "\(request.operation)")
        }
    }

    @Test func logoutPutsTheRedirectURLInTheQuery() {
        let request = V2Request.logout(serviceProvider: "REF30", mvpd: "Cablevision", redirectURL: "adobepass://ios.app")
        #expect(request.method == .get && request.target == "/api/v2/REF30/logout/Cablevision?redirectUrl=adobepass%3A%2F%2Fios.app")
    }

    @Test func onlyDocumentedDeviceHeadersAreSent() {
        // Resume, get-session and profile-by-code list no device headers (the caller is often a second screen).
        for request in [
            V2Request.resumeSession(serviceProvider: "s", code: "c", mvpd: "m", domainName: nil, redirectURL: nil),
            .session(serviceProvider: "s", code: "c"), .profileByCode(serviceProvider: "s", code: "c"),
        ] {
            #expect(request.deviceIdentifier == .notSent && request.deviceInfo == .notSent, "\(request.operation)")
        }
        expectEqual(V2Request.configuration(serviceProvider: "s").deviceIdentifier, .optional)
    }

    @Test func clientRegistrationAndTokenRequests() {
        let register = V2Request.registerClient(softwareStatement: "eyJ.statement", redirectURI: "adobepass://ios.app")
        #expect(register.method == .post && register.path == "/o/client/register" && !register.needsAccessToken)
        #expect(String(decoding: register.body?.bytes ?? [], as: UTF8.self)
            == #"{"redirect_uri":"adobepass://ios.app","software_statement":"eyJ.statement"}"#)
        let token = V2Request.accessToken(clientID: "id", clientSecret: "s3cret")
        #expect(token.path == "/o/client/token" && token.body?.contentType == "application/x-www-form-urlencoded")
        expectEqual(String(decoding: token.body?.bytes ?? [], as: UTF8.self), "client_id=id&client_secret=s3cret&grant_type=client_credentials")
        #expect(register.deviceInfo == .required && register.deviceIdentifier == .notSent)
    }

    @Test func pathSegmentsAreEncoded() {
        expectEqual(V2Request.profile(serviceProvider: "REF 30", mvpd: "a/b").path, "/api/v2/REF%2030/profiles/a%2Fb")
    }
}
