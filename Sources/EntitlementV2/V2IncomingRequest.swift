import EntitlementSupport

/// A request as a REST API V2 service receives it — method, path, query, header fields and body — and
/// its reading as the V2 request it is (the inverse of ``V2OutgoingRequest``): the path and method name
/// the operation, the body and query its parameters, and the documented headers its context. A request
/// that is not one reads as V2's enhanced error, as the service would answer it.
package struct V2IncomingRequest: Sendable, Hashable {
    /// What a request turned out to be.
    package enum Reading: Sendable, Hashable {
        /// A REST API V2 or client-registration request.
        case api(V2Request, V2RequestContext)
        /// Not an API path: a page for the browser.
        case web
        /// An API path the service refuses.
        case refused(V2Response)
        /// An API path that does not take this method: 405, with the methods it takes (`Allow`).
        case methodNotAllowed(allowed: [String])
    }

    /// The method (`GET`, `POST`).
    package var method: String
    /// The path, percent-encoded as it arrived (`/api/v2/{serviceProvider}/sessions`).
    package var path: String
    /// The query, without its `?`.
    package var query: String
    /// The header fields, in order (names compared without regard to case).
    package var headers: [(name: String, value: String)]
    /// The body.
    package var body: [UInt8]

    /// Creates a request from its parts.
    package init(method: String, path: String, query: String = "", headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }

    /// The request a client built (its URL's path and query below `baseURL`'s host), as the service receives it.
    package init(_ outgoing: V2OutgoingRequest) {
        let url = outgoing.url
        let afterScheme = url.firstRange(of: "://").map { url[$0.upperBound...] } ?? Substring(url)
        let target = afterScheme.firstIndex(of: "/").map { afterScheme[$0...] } ?? "/"
        let parts = target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)
        self.init(
            method: outgoing.method, path: String(parts[0]), query: parts.count > 1 ? String(parts[1]) : "",
            headers: outgoing.headers.sorted { $0.key < $1.key }.map { (name: $0.key, value: $0.value) }, body: outgoing.body)
    }

    /// The first value of the header field `name`, if any.
    package func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveEquals(name) }?.value
    }

    package static func == (lhs: V2IncomingRequest, rhs: V2IncomingRequest) -> Bool {
        lhs.method == rhs.method && lhs.path == rhs.path && lhs.query == rhs.query && lhs.body == rhs.body
            && lhs.headers.map(\.name) == rhs.headers.map(\.name) && lhs.headers.map(\.value) == rhs.headers.map(\.value)
    }

    package func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(path)
        hasher.combine(query)
        hasher.combine(body)
        for field in headers {
            hasher.combine(field.name)
            hasher.combine(field.value)
        }
    }

    /// What this request is: a V2 operation with its context, a page, or a refusal as the service answers it.
    package func read() -> Reading {
        let http = self
        let path = http.path
        let registering = path == "/o/client/register" || path == "/o/client/token"
        guard path.hasPrefix("/api/v2/") || registering else { return .web }
        let rawSegments = path.dropFirst("/api/v2/".count).split(separator: "/", omittingEmptySubsequences: false)
        let segments = (try? rawSegments.map { try PercentEncoding.decode($0) }) ?? []
        if segments.first == "authenticate" || segments == ["logout", "complete"] { return .web }
        let context: V2RequestContext
        switch Self.headers(http) {
        case .read(let read): context = read
        case .refused(let refusal): return .refused(refusal)
        }
        if registering { return Self.registration(http, path, context) }
        guard !segments.isEmpty, segments.allSatisfy({ !$0.isEmpty }) else { return .refused(Self.notFound) }
        let query = FormCoding.decode(Substring(http.query))
        let method = http.method
        let sp = segments[0]
        let rest = Array(segments.dropFirst())
        let request: V2Request
        do throws(Refusal) {
            switch (method, rest.count, rest.first) {
            case ("GET", 1, "configuration"): request = .configuration(serviceProvider: sp)
            case ("POST", 1, "sessions"):
                let form = try Self.form(http)
                request = .createSession(serviceProvider: sp, mvpd: form["mvpd"], domainName: form["domainName"], redirectURL: form["redirectUrl"])
            case ("POST", 2, "sessions"):
                let form = try Self.form(http)
                request = .resumeSession(
                    serviceProvider: sp, code: rest[1], mvpd: form["mvpd"], domainName: form["domainName"], redirectURL: form["redirectUrl"])
            case ("GET", 2, "sessions"): request = .session(serviceProvider: sp, code: rest[1])
            case ("POST", 3, "sessions") where rest[1] == "sso":
                let form = try Self.form(http)
                // Both are required (Adobe's contract, `retrieveVerificationTokenUsingPOST`).
                guard let domainName = form["domainName"] else { return .refused(Self.badRequest("The domainName parameter is required.")) }
                guard let redirectURL = form["redirectUrl"] else { return .refused(Self.missing("invalid_parameter_redirect_url")) }
                request = .partnerSession(serviceProvider: sp, partner: rest[2], domainName: domainName, redirectURL: redirectURL)
            case ("GET", 1, "profiles"): request = .profiles(serviceProvider: sp)
            case ("GET", 2, "profiles"): request = .profile(serviceProvider: sp, mvpd: rest[1])
            case ("GET", 3, "profiles") where rest[1] == "code": request = .profileByCode(serviceProvider: sp, code: rest[2])
            case ("POST", 3, "profiles") where rest[1] == "sso":
                let form = try Self.form(http)
                guard let saml = form["SAMLResponse"] else { throw Refusal(Self.missing("invalid_parameter_saml_response")) }
                request = .partnerProfile(serviceProvider: sp, partner: rest[2], samlResponse: saml)
            case ("POST", 3, "decisions") where rest[1] == "authorize" || rest[1] == "preauthorize":
                guard let resources = Self.resources(http) else { return .refused(Self.missing("invalid_parameter_resources")) }
                request =
                    rest[1] == "authorize"
                    ? .authorize(serviceProvider: sp, mvpd: rest[2], resources: resources)
                    : .preauthorize(serviceProvider: sp, mvpd: rest[2], resources: resources)
            case ("GET", 2, "logout"):
                guard let redirectURL = query["redirectUrl"] else { return .refused(Self.missing("invalid_parameter_redirect_url")) }
                request = .logout(serviceProvider: sp, mvpd: rest[1], redirectURL: redirectURL)
            default:
                guard let allowed = Self.allowedMethods(rest) else { return .refused(Self.notFound) }
                return .methodNotAllowed(allowed: allowed)
            }
        } catch {
            return .refused(error.response)
        }
        if request.deviceIdentifier == .required, context.deviceID == nil {
            return .refused(Self.missing("invalid_header_device_identifier"))
        }
        return .api(request, context)
    }

    // MARK: - Parts

    private static func registration(_ http: V2IncomingRequest, _ path: String, _ context: V2RequestContext) -> Reading {
        guard http.method == "POST" else { return .methodNotAllowed(allowed: ["POST"]) }
        if path == "/o/client/register" {
            guard mediaType(http) == "application/json",
                let json = try? JSONReader.read(Array(http.body)),
                let statement = json["software_statement"]?.string
            else { return .refused(.oauthError("invalid_request")) }
            return .api(.registerClient(softwareStatement: statement, redirectURI: json["redirect_uri"]?.string), context)
        }
        // The token request's parameters in the form body (Adobe's page) or the query (Adobe's contract).
        let body = mediaType(http) == "application/x-www-form-urlencoded" ? FormCoding.decode(Substring(String(decoding: http.body, as: UTF8.self))) : [:]
        let fields = body.merging(FormCoding.decode(Substring(http.query))) { fromBody, _ in fromBody }
        guard let id = fields["client_id"], let secret = fields["client_secret"], fields["grant_type"] == "client_credentials"
        else { return .refused(.oauthError("invalid_request")) }
        return .api(.accessToken(clientID: id, clientSecret: secret), context)
    }

    /// The documented headers, read; a malformed device header is V2's `invalid_header_…` error.
    private enum Headers {
        case read(V2RequestContext)
        case refused(V2Response)
    }

    private static func headers(_ http: V2IncomingRequest) -> Headers {
        var context = V2RequestContext()
        context.bearer = bearer(http)
        if let identifier = http.header("AP-Device-Identifier") {
            guard identifier.hasPrefix("fingerprint "), let bytes = Base64.decode(String(identifier.dropFirst("fingerprint ".count))),
                let id = String(validating: bytes, as: UTF8.self), !id.isEmpty
            else { return .refused(missing("invalid_header_device_identifier")) }
            context.deviceID = id
        }
        if let info = http.header("X-Device-Info") {
            guard let read = try? V2DeviceInfo(headerValue: info) else { return .refused(missing("invalid_header_device_info")) }
            context.deviceInfo = read
        }
        context.forwardedFor = http.header("X-Forwarded-For")?.split(separator: ",").first.map { String($0.trimming(" ")) }
        context.visitorID = http.header("AP-Visitor-Identifier")
        context.tempPassIdentity = http.header("AP-TempPass-Identity")
        return .read(context)
    }

    /// The access token in `Authorization: Bearer …`, if any.
    package static func bearer(_ http: V2IncomingRequest) -> String? {
        guard let authorization = http.header("Authorization"), authorization.hasPrefix("Bearer ") else { return nil }
        return String(authorization.dropFirst("Bearer ".count))
    }

    private static func mediaType(_ http: V2IncomingRequest) -> String {
        (http.header("Content-Type") ?? "").lowercased().split(separator: ";").first.map { String($0.trimming(" ")) } ?? ""
    }

    /// The form body of an operation whose fields are strings (Adobe's contract): refused when the body
    /// is another media type, does not decode, or gives a field twice (a list, not a string).
    private static func form(_ http: V2IncomingRequest) throws(Refusal) -> [String: String] {
        guard http.body.isEmpty || mediaType(http) == "application/x-www-form-urlencoded" else { throw Refusal(unsupportedBody) }
        do throws(FormCoding.StrictDecodingError) {
            return try FormCoding.decodeStrictly(Substring(String(decoding: http.body, as: UTF8.self)))
        } catch {
            switch error {
            case .undecodable: throw Refusal(badRequest("The body is not a valid application/x-www-form-urlencoded form."))
            case .repeated(let name): throw Refusal(badRequest("The parameter \(name) is given more than once."))
            case .tooManyFields: throw Refusal(badRequest("The form has more than \(FormCoding.fieldLimit) fields."))
            }
        }
    }

    /// The answer refusing a request whose body breaks the operation's schema.
    private struct Refusal: Error {
        let response: V2Response
        init(_ response: V2Response) { self.response = response }
    }

    /// V2's documented 400 with a sentence (for a refusal the error catalogue has no code for).
    private static func badRequest(_ message: String) -> V2Response {
        V2Response(status: 400, body: ["status": 400, "message": .string(message), "action": "none"])
    }

    private static func resources(_ http: V2IncomingRequest) -> [String]? {
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
    package static func allowedMethods(_ rest: [String]) -> [String]? {
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

extension String {
    fileprivate func caseInsensitiveEquals(_ other: String) -> Bool {
        utf8.count == other.utf8.count && zip(utf8, other.utf8).allSatisfy { a, b in
            (a | (a >= 65 && a <= 90 ? 32 : 0)) == (b | (b >= 65 && b <= 90 ? 32 : 0))
        }
    }
}
