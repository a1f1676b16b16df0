/// An answer of REST API V2, independent of transport: the HTTP status and the JSON body (or, for
/// the throttler's `text/html` 429, none).
package struct V2Response: Sendable, Hashable {
    /// The HTTP status.
    package var status: Int
    /// The JSON body, if the answer has one.
    package var body: JSONValue?
    /// Why a body that arrived is not ``body`` (`not JSON`, `Content-Type text/html`), for the
    /// malformed-answer error; nil when there was none or it was read.
    package var bodyProblem: String?

    /// Creates an answer.
    package init(status: Int, body: JSONValue?, bodyProblem: String? = nil) {
        self.status = status
        self.body = body
        self.bodyProblem = bodyProblem
    }

    /// A top-level enhanced error, sent with its own status.
    package static func error(_ error: V2EnhancedError) -> V2Response {
        V2Response(status: Int(clamping: error.status), body: error.json)
    }

    /// An OAuth-style client-registration error (`{"error": "…"}`, HTTP 400).
    package static func oauthError(_ code: String) -> V2Response { V2Response(status: 400, body: ["error": .string(code)]) }

    /// Throttled: HTTP 429 with no JSON body.
    package static let throttled = V2Response(status: 429, body: nil)
}
