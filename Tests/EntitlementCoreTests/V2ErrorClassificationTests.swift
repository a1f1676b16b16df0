import EntitlementEngine
import EntitlementTestSupport
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

    @Test func theServicesCodeIsReadBackFromEveryErrorThatCarriesOne() {
        let gone = BackendError(v2: V2ErrorCatalogue.error("invalid_authentication_session")!, httpStatus: 400)
        expectEqual(gone.v2ErrorCode, "invalid_authentication_session")
        #expect(gone.saysSessionIsGone)
        expectEqual(BackendError(v2: Self.error("network_connection_timeout", .retry), httpStatus: 403).v2ErrorCode, "network_connection_timeout")
        expectEqual(BackendError(v2: Self.error("authenticated_profile_missing", .authentication), httpStatus: 403).v2ErrorCode, "authenticated_profile_missing")
        expectEqual(BackendError.denied(code: "authorization_denied_by_mvpd", message: "No.").v2ErrorCode, "authorization_denied_by_mvpd")
        expectEqual(BackendError(v2: Self.error("invalid_parameter_code", .none, status: 400), httpStatus: 400).saysSessionIsGone, false)
        // Words that are not a code before a colon, and failures without a code, have none.
        #expect(BackendError.httpStatus(502, "Bad Gateway: upstream").v2ErrorCode == nil)
        #expect(BackendError.httpStatus(502, "").v2ErrorCode == nil)
        #expect(BackendError.httpStatus(400, ": nothing").v2ErrorCode == nil)
        #expect(BackendError.network("invalid_authentication_session: spoofed by a proxy").v2ErrorCode == nil)
        #expect(BackendError.timeout.v2ErrorCode == nil)
    }

    @Test func throttlingWaitsAtLeastASecond() {
        expectEqual(BackendError(v2HTTPStatus: 429), .throttled(retryAfterSeconds: 1))
        expectEqual(BackendError(v2HTTPStatus: 502), .httpStatus(502, ""))
        expectEqual(BackendError(v2HTTPStatus: 502).summary, "HTTP 502")
    }

    @Test func retriesAreAtMostTwoWithBackoff() {
        let policy = V2RetryPolicy()
        expectEqual(policy.pause(before: 1), .milliseconds(500))
        expectEqual(policy.pause(before: 2), .seconds(1))
        #expect(policy.pause(before: 3) == nil)
        #expect(BackendError(v2: Self.error("authenticated_profile_missing", .authentication), httpStatus: 403) != .retryable("authenticated_profile_missing: The message."), "only retry errors are retryable")
        #expect(V2RetryPolicy(retries: 99).retries == 3 && V2RetryPolicy(retries: -1).retries == 0)
    }
}
