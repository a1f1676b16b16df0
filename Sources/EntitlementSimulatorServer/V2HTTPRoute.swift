import EntitlementEngine
import EntitlementHTTPServer

/// Reads an HTTP request as the REST API V2 request it is: the server's side of the wire is
/// `V2IncomingRequest` (module EntitlementV2, beside the client's `V2OutgoingRequest`); this hands it
/// the request's parts.
enum V2HTTPRoute {
    /// What `http` is: a V2 operation with its context, a page, or a refusal as the service answers it.
    static func read(_ http: HTTPRequest) -> V2IncomingRequest.Reading {
        incoming(http).read()
    }

    /// The access token in `Authorization: Bearer …`, if any.
    static func bearer(_ http: HTTPRequest) -> String? {
        V2IncomingRequest.bearer(incoming(http))
    }

    private static func incoming(_ http: HTTPRequest) -> V2IncomingRequest {
        V2IncomingRequest(
            method: http.method, path: String(http.path), query: String(http.query),
            headers: http.headers.map { (name: $0.name, value: $0.value) }, body: http.body)
    }
}
