import EntitlementEngine
import EntitlementHTTPServer
import EntitlementSimulator
import EntitlementSupport

/// The simulator on HTTP: REST API V2 and client registration answered by a
/// `SimulatedV2Service` (the same core as in process), and everything else as the simulator's web
/// — the service provider's and MVPDs' pages, the redirect chain and the second screen's
/// activation page — rendered as HTML.
///
/// Injected transport faults become real ones: a network failure resets the connection in the
/// middle of the body; a timeout holds the answer until the client gives up (or the server
/// stops). A bare HTTP status is sent with a text body, throttling as V2's `text/html` 429.
package struct SimulatorHTTPApp: Sendable {
    /// The V2 service answering API requests.
    package let service: SimulatedV2Service
    /// The URL pages are loaded under (`http://127.0.0.1:PORT`, the world's service provider when
    /// served with `SimulatedWorld.served(at:)`).
    package let baseURL: String
    /// How long a held ("timeout") answer waits before the server gives up itself.
    package let holdLimit: Duration

    /// An app answering with `service`, its pages under `baseURL`.
    package init(service: SimulatedV2Service, baseURL: String, holdLimit: Duration = .seconds(120)) {
        self.service = service
        self.baseURL = baseURL
        self.holdLimit = holdLimit
    }

    /// The answer to `request`.
    package func respond(_ request: HTTPRequest) async -> HTTPResponse {
        if request.path.hasPrefix(Self.programmerPath) { return await programmer(request) }
        if request.path.hasPrefix(Self.securityAPIPath) { return await securityAPI(request) }
        switch V2HTTPRoute.read(request) {
        case .api(let v2, let context): return await api(v2, context)
        case .refused(let refusal):
            // A request's parameters and headers are judged after its access token, as the service does
            // everywhere: without a valid token the answer is 401, whatever else is wrong.
            if refusal.status == 400, request.path.hasPrefix("/api/v2/"),
                let unauthenticated = service.registrar.refusal(bearer: V2HTTPRoute.bearer(request))
            {
                return Self.http(unauthenticated)
            }
            return Self.http(refusal)
        case .methodNotAllowed(let allowed): return Self.methodNotAllowed(allowed, json: true)
        case .web: return await web(request)
        }
    }

    // MARK: - REST API V2

    private func api(_ request: V2Request, _ context: V2RequestContext) async -> HTTPResponse {
        do {
            return Self.http(try await service.send(request, context: context))
        } catch .timeout {
            try? await Task.sleep(for: holdLimit)
            return .text(504, "No answer in time.\n")
        } catch where error.code == .network {
            let body = Array(#"{"status":200,"partial":"the connection resets before this body ends"}"#.utf8)
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: body, ending: .resetMidBody(bodyBytes: 12))
        } catch {
            return .text(500, "\(error.summary)\n")
        }
    }

    static let jsonHeaders = HTTPHeaders([("Content-Type", "application/json;charset=UTF-8")])

    /// 405 with `Allow`: V2's error JSON for an API path, the error page for a page.
    static func methodNotAllowed(_ allowed: [String], json: Bool) -> HTTPResponse {
        var answer =
            json
            ? http(V2Response(status: 405, body: ["status": 405, "message": "This operation does not take that method.", "action": "none"]))
            : .html(405, WebPageHTML.error(status: 405, message: "Method not allowed."))
        answer.headers.set("Allow", allowed.joined(separator: ", "))
        return answer
    }

    /// A V2 answer on the wire: JSON when it has a body; 429 as openresty's page; else the status alone.
    static func http(_ answer: V2Response) -> HTTPResponse {
        if let body = answer.body { return HTTPResponse(status: answer.status, headers: jsonHeaders, body: body.canonicalBytes) }
        if answer.status == 429 {
            return .html(
                429,
                "<html>\r\n<head><title>429 Too Many Requests</title></head>\r\n<body>\r\n<center><h1>429 Too Many Requests</h1></center>\r\n<hr><center>openresty</center>\r\n</body>\r\n</html>\r\n"
            )
        }
        return .text(answer.status, HTTPResponse.reason(answer.status) + "\n")
    }

    // MARK: - The programmer's authorization service

    /// Where the programmer's servers answer: `POST /programmer/ID/authorize`, and the user's PIN for a
    /// step-up at `POST /programmer/ID/step-up`.
    package static let programmerPath = "/programmer/"

    /// The URL server `id` answers at under `baseURL`.
    package static func programmerURL(baseURL: String, serverID: String) -> String {
        baseURL + programmerPath + PercentEncoding.encode(serverID) + "/authorize"
    }

    /// The URL of server `id`'s step-up page (the PIN for a transaction) under `baseURL`.
    package static func stepUpURL(baseURL: String, serverID: String) -> String {
        baseURL + programmerPath + PercentEncoding.encode(serverID) + "/step-up"
    }

    private func programmer(_ request: HTTPRequest) async -> HTTPResponse {
        let parts = request.path.dropFirst(Self.programmerPath.count).split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[1] == "authorize" || parts[1] == "step-up", let id = try? PercentEncoding.decode(parts[0]) else {
            return .text(404, "Not found.\n")
        }
        guard request.method == "POST" else { return Self.methodNotAllowed(["POST"], json: false) }
        let form = FormCoding.decode(Substring(String(decoding: request.body, as: UTF8.self)))
        let simulator = service.simulator
        let answer =
            parts[1] == "authorize"
            ? await simulator.programmerAuthorization(serverID: id, form: form) : await simulator.confirmTransaction(serverID: id, form: form)
        switch answer {
        case .http(let status, let contentType, let body):
            return HTTPResponse(status: status, headers: HTTPHeaders([("Content-Type", contentType)]), body: body)
        case .noAnswer:
            let body = Array(#"{"partial":"the connection resets before this body ends"}"#.utf8)
            return HTTPResponse(status: 200, headers: Self.jsonHeaders, body: body, ending: .resetMidBody(bodyBytes: 8))
        }
    }

    // MARK: - Pugpig's Security API

    /// Where the subscription services answer: `/security-api/ID/sign_in/` and the other operations.
    package static let securityAPIPath = "/security-api/"

    /// The base URL (Pugpig's `ENDPOINT`) of subscription service `id` under `baseURL`.
    package static func securityAPIBase(baseURL: String, providerID: String) -> String {
        baseURL + securityAPIPath + PercentEncoding.encode(providerID)
    }

    private func securityAPI(_ request: HTTPRequest) async -> HTTPResponse {
        let parts = request.path.dropFirst(Self.securityAPIPath.count).split(separator: "/")
        guard parts.count == 2, let id = try? PercentEncoding.decode(parts[0]) else { return .text(404, "Not found.\n") }
        let form =
            request.method == "POST"
            ? FormCoding.decode(Substring(String(decoding: request.body, as: UTF8.self))) : FormCoding.decode(request.query)
        switch await service.simulator.securityAPI(providerID: id, operation: String(parts[1]), form: form) {
        case .http(let status, let contentType, let body):
            return HTTPResponse(
                status: status, headers: HTTPHeaders([("Content-Type", contentType), ("Cache-Control", "no-store")]), body: body)
        case .noAnswer:
            let body = Array("<token>the connection resets before this body ends</token>".utf8)
            return HTTPResponse(status: 200, headers: HTTPHeaders([("Content-Type", "application/xml")]), body: body, ending: .resetMidBody(bodyBytes: 8))
        }
    }

    // MARK: - Pages

    private func web(_ request: HTTPRequest) async -> HTTPResponse {
        let simulator = service.simulator
        // The authenticate URL is opened in a browser (GET); the other pages also take their forms.
        let allowed = request.path.hasPrefix("/api/v2/authenticate/") ? ["GET", "HEAD"] : ["GET", "HEAD", "POST"]
        guard allowed.contains(request.method) else { return Self.methodNotAllowed(allowed, json: false) }
        if request.path == "/" { return .html(200, WebPageHTML.index(await simulator.world, baseURL: baseURL)) }
        let url = baseURL + request.target
        if url.split(separator: "?")[0] == simulator.activationURL, FormCoding.decode(request.query)["code"] == nil {
            return .html(200, WebPageHTML.activation(action: simulator.activationURL))
        }
        let form = request.method == "POST" ? FormCoding.decode(Substring(String(decoding: request.body, as: UTF8.self))) : [:]
        let answer = await simulator.load(WebRequest(method: request.method == "POST" ? .post : .get, url: url, form: form))
        switch answer {
        case .redirect(let location): return .redirect(location)
        case .page(let page): return .html(200, WebPageHTML.page(page))
        case .error(let status, let message): return .html(status, WebPageHTML.error(status: status, message: message))
        }
    }
}
