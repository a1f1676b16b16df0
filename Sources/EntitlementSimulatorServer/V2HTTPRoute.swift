import EntitlementEngine
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSupport

/// Reads an HTTP request as the REST API V2 request it is (the inverse of what a V2 client sends):
/// the path and method name the operation, the body and query its parameters, and the documented
/// headers its context. A request that is not one answers with V2's enhanced error, as the service
/// would.
enum V2HTTPRoute {
    /// What a request turned out to be.
    enum Reading {
        /// A REST API V2 or client-registration request.
        case api(V2Request, V2RequestContext)
        /// Not an API path: a page for the browser.
        case web
        /// An API path the service refuses.
        case refused(V2Response)
        /// An API path that does not take this method: 405, with the methods it takes (`Allow`).
        case methodNotAllowed(allowed: [String])
    }

    static func read(_ http: HTTPRequest) -> Reading {
        let path = String(http.path)
        let registering = path == "/o/client/register" || path == "/o/client/token"
        guard path.hasPrefix("/api/v2/") || registering else { return .web }
        let rawSegments = path.dropFirst("/api/v2/".count).split(separator: "/", omittingEmptySubsequences: false)
        let segments = (try? rawSegments.map { try PercentEncoding.decode($0) }) ?? []
        if segments.first == "authenticate" || segments == ["logout", "complete"] { return .web }
        let context: V2RequestContext
        switch headers(http) {
        case .read(let read): context = read
        case .refused(let refusal): return .refused(refusal)
        }
        if registering { return registration(http, path, context) }
        guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty }) else { return .refused(notFound) }
        let query = FormCoding.decode(http.query)
        let method = http.method
        let sp = segments[0]
        let rest = Array(segments.dropFirst())
        let request: V2Request
        switch (method, rest.count, rest.first) {
        case ("GET", 1, "configuration"): request = .configuration(serviceProvider: sp)
        case ("POST", 1, "sessions"):
            guard let form = form(http) else { return .refused(unsupportedBody) }
            request = .createSession(serviceProvider: sp, mvpd: form["mvpd"], domainName: form["domainName"], redirectURL: form["redirectUrl"])
        case ("POST", 2, "sessions"):
            guard let form = form(http) else { return .refused(unsupportedBody) }
            request = .resumeSession(
                serviceProvider: sp, code: rest[1], mvpd: form["mvpd"], domainName: form["domainName"], redirectURL: form["redirectUrl"])
        case ("GET", 2, "sessions"): request = .session(serviceProvider: sp, code: rest[1])
        case ("POST", 3, "sessions") where rest[1] == "sso":
            guard let form = form(http) else { return .refused(unsupportedBody) }
            request = .partnerSession(
                serviceProvider: sp, partner: rest[2], domainName: form["domainName"] ?? "", redirectURL: form["redirectUrl"] ?? "")
        case ("GET", 1, "profiles"): request = .profiles(serviceProvider: sp)
        case ("GET", 2, "profiles"): request = .profile(serviceProvider: sp, mvpd: rest[1])
        case ("GET", 3, "profiles") where rest[1] == "code": request = .profileByCode(serviceProvider: sp, code: rest[2])
        case ("POST", 3, "profiles") where rest[1] == "sso":
            guard let form = form(http), let saml = form["SAMLResponse"] else { return .refused(missing("invalid_parameter_saml_response")) }
            request = .partnerProfile(serviceProvider: sp, partner: rest[2], samlResponse: saml)
        case ("POST", 3, "decisions") where rest[1] == "authorize" || rest[1] == "preauthorize":
            guard let resources = resources(http) else { return .refused(missing("invalid_parameter_resources")) }
            request =
                rest[1] == "authorize"
                ? .authorize(serviceProvider: sp, mvpd: rest[2], resources: resources)
                : .preauthorize(serviceProvider: sp, mvpd: rest[2], resources: resources)
        case ("GET", 2, "logout"):
            guard let redirectURL = query["redirectUrl"] else { return .refused(missing("invalid_parameter_redirect_url")) }
            request = .logout(serviceProvider: sp, mvpd: rest[1], redirectURL: redirectURL)
        default:
            guard let allowed = allowedMethods(rest) else { return .refused(notFound) }
            return .methodNotAllowed(allowed: allowed)
        }
        if request.deviceIdentifier == .required, context.deviceID == nil {
            return .refused(missing("invalid_header_device_identifier"))
        }
        return .api(request, context)
    }

    // MARK: - Parts

    private static func registration(_ http: HTTPRequest, _ path: String, _ context: V2RequestContext) -> Reading {
        guard http.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
        if path == "/o/client/register" {
            guard mediaType(http) == "application/json",
                let json = try? JSONReader.read(Array(http.body)),
                let statement = json["software_statement"]?.string
            else { return .refused(.oauthError("invalid_request")) }
            return .api(.registerClient(softwareStatement: statement, redirectURI: json["redirect_uri"]?.string), context)
        }
        // The token request's parameters in the form body (Adobe's page) or the query (Adobe's contract).
        let fields = (form(http) ?? [:]).merging(FormCoding.decode(http.query)) { fromBody, _ in fromBody }
        guard let id = fields["client_id"], let secret = fields["client_secret"], fields["grant_type"] == "client_credentials"
        else { return .refused(.oauthError("invalid_request")) }
        return .api(.accessToken(clientID: id, clientSecret: secret), context)
    }

    /// The documented headers, read; a malformed device header is V2's `invalid_header_…` error.
    private enum Headers {
        case read(V2RequestContext)
        case refused(V2Response)
    }

    private static func headers(_ http: HTTPRequest) -> Headers {
        var context = V2RequestContext()
        context.bearer = bearer(http)
        if let identifier = http.headers["AP-Device-Identifier"] {
            guard identifier.hasPrefix("fingerprint "), let bytes = Base64.decode(String(identifier.dropFirst("fingerprint ".count))),
                let id = String(validating: bytes, as: UTF8.self), !id.isEmpty
            else { return .refused(missing("invalid_header_device_identifier")) }
            context.deviceID = id
        }
        if let info = http.headers["X-Device-Info"] {
            guard let read = try? V2DeviceInfo(headerValue: info) else { return .refused(missing("invalid_header_device_info")) }
            context.deviceInfo = read
        }
        context.forwardedFor = http.headers["X-Forwarded-For"]?.split(separator: ",").first.map { String($0.trimmingCharacters(in: " ")) }
        context.visitorID = http.headers["AP-Visitor-Identifier"]
        context.tempPassIdentity = http.headers["AP-TempPass-Identity"]
        return .read(context)
    }

    /// The access token in `Authorization: Bearer …`, if any.
    static func bearer(_ http: HTTPRequest) -> String? {
        guard let authorization = http.headers["Authorization"], authorization.hasPrefix("Bearer ") else { return nil }
        return String(authorization.dropFirst("Bearer ".count))
    }

    private static func mediaType(_ http: HTTPRequest) -> String {
        (http.headers["Content-Type"] ?? "").lowercased().split(separator: ";").first.map { String($0.trimmingCharacters(in: " ")) } ?? ""
    }

    private static func form(_ http: HTTPRequest) -> [String: String]? {
        guard http.body.isEmpty || mediaType(http) == "application/x-www-form-urlencoded" else { return nil }
        return FormCoding.decode(Substring(String(decoding: http.body, as: UTF8.self)))
    }

    private static func resources(_ http: HTTPRequest) -> [String]? {
        guard mediaType(http) == "application/json", let json = try? JSONReader.read(Array(http.body)),
            let items = json["resources"]?.array, !items.isEmpty
        else { return nil }
        let resources = items.compactMap(\.string)
        return resources.count == items.count ? resources : nil
    }

    private static func missing(_ code: String) -> V2Response {
        .error(V2ErrorCatalogue.error(code) ?? V2EnhancedError(status: 400, code: code, message: "Bad request.", action: .none))
    }

    /// The methods the API path after `/api/v2/{serviceProvider}/` takes; nil for a path that is none.
    static func allowedMethods(_ rest: [String]) -> [String]? {
        switch (rest.count, rest.first) {
        case (1, "configuration"), (1, "profiles"), (2, "profiles"), (2, "logout"): ["GET"]
        case (3, "profiles") where rest[1] == "code": ["GET"]
        case (3, "profiles") where rest[1] == "sso": ["POST"]
        case (1, "sessions"): ["POST"]
        case (2, "sessions"): ["GET", "POST"]
        case (3, "sessions") where rest[1] == "sso": ["POST"]
        case (3, "decisions") where rest[1] == "authorize" || rest[1] == "preauthorize": ["POST"]
        default: nil
        }
    }

    private static let notFound = V2Response(
        status: 404, body: ["status": 404, "message": "No REST API V2 operation has this path.", "action": "none"])
    /// A body that is not the form the operation takes: V2's documented 400, as an error JSON.
    private static let unsupportedBody = V2Response(
        status: 400, body: ["status": 400, "message": "The body must be application/x-www-form-urlencoded.", "action": "none"])
}

extension Substring {
    func trimmingCharacters(in set: String) -> Substring {
        var slice = self
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return slice
    }
}
