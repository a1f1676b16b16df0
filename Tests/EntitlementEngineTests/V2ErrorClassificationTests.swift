import EntitlementEngine
import Testing

/// V2 errors become the engine's typed backend errors by their `action`; only `retry` is retried.
@Suite("REST API V2 errors by action")
struct V2ErrorClassificationTests {
    static func error(_ code: String, _ action: V2EnhancedError.Action, status: Int64 = 403, details: String? = nil) -> V2EnhancedError {
        V2EnhancedError(status: status, code: code, message: "The message.", details: details, action: action)
    }

    @Test func eachActionLeadsWhereTheEngineNeedsIt() {
        #expect(BackendError(v2: Self.error("authenticated_profile_missing", .authentication), httpStatus: 403)
            == .authenticationRequired("authenticated_profile_missing: The message."))
        #expect(BackendError(v2: Self.error("authorization_denied_by_mvpd", .none, details: "Upgrade your package."), httpStatus: 200)
            == .denied(code: "authorization_denied_by_mvpd", message: "Upgrade your package."))
        #expect(BackendError(v2: Self.error("authorization_denied_by_parental_controls", .authorization), httpStatus: 200)
            == .denied(code: "authorization_denied_by_parental_controls", message: "The message."))
        #expect(BackendError(v2: Self.error("network_connection_timeout", .retry), httpStatus: 403)
            == .retryable("network_connection_timeout: The message."))
        #expect(BackendError(v2: Self.error("invalid_parameter_code", .none, status: 400), httpStatus: 400)
            == .httpStatus(400, "invalid_parameter_code: The message."))
        #expect(BackendError(v2: Self.error("too_many_resources", .configuration), httpStatus: 200)
            == .httpStatus(403, "too_many_resources: The message."), "an item error keeps its own status")
        #expect(BackendError(v2: Self.error("something_new", .other("reboot"), status: 500), httpStatus: 500)
            == .httpStatus(500, "something_new: The message."))
    }

    @Test func throttlingWaitsAtLeastASecond() {
        #expect(BackendError(v2HTTPStatus: 429) == .throttled(retryAfterSeconds: 1))
        #expect(BackendError(v2HTTPStatus: 502) == .httpStatus(502, ""))
        #expect(BackendError(v2HTTPStatus: 502).summary == "HTTP 502")
    }

    @Test func retriesAreAtMostTwoWithBackoff() {
        let policy = V2RetryPolicy()
        #expect(policy.pause(before: 1) == .milliseconds(500))
        #expect(policy.pause(before: 2) == .seconds(1))
        #expect(policy.pause(before: 3) == nil)
        #expect(BackendError(v2: Self.error("authenticated_profile_missing", .authentication), httpStatus: 403) != .retryable("authenticated_profile_missing: The message."), "only retry errors are retryable")
        #expect(V2RetryPolicy(retries: 99).retries == 3 && V2RetryPolicy(retries: -1).retries == 0)
    }
}
