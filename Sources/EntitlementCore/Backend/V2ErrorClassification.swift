/// How the engine reads a V2 error answer (Adobe's *Enhanced Error Codes* and *Throttling
/// mechanism*): by its `action`, and HTTP 429 as throttling. One place decides it for every endpoint.
extension BackendError {
    /// The backend error for a V2 enhanced error received with `httpStatus` (top-level) or inside
    /// a decision (item-level, `httpStatus` 200):
    /// - `authentication` → ``authenticationRequired(_:)``: the engine takes the authentication path;
    /// - `authorization`, and a denial (`…_denied_…`) with no action or one this engine does not know →
    ///   ``denied(code:message:)`` with the partner's own words (`details`) when there are some;
    /// - `retry` → ``retryable(_:)``: sent again at most twice (see `V2RetryPolicy`);
    /// - anything else → ``httpStatus(_:_:)`` with the real status.
    package init(v2 error: V2EnhancedError, httpStatus: Int) {
        let words = error.details.flatMap { $0.isEmpty ? nil : $0 } ?? error.message
        switch error.action {
        case .authentication:
            self = .authenticationRequired("\(error.code): \(error.message)")
        case .authorization:
            self = .denied(code: error.code, message: words)
        case .retry:
            self = .retryable("\(error.code): \(error.message)")
        case .none where error.code.contains("_denied_"), .other where error.code.contains("_denied_"):
            self = .denied(code: error.code, message: words)
        case .none, .configuration, .applicationRegistration, .other:
            let status = httpStatus == 200 ? Int(clamping: error.status) : httpStatus
            self = .httpStatus(status, "\(error.code): \(error.message)")
        }
    }

    /// The enhanced error code the service answered with (`invalid_authentication_session`, …), as
    /// `init(v2:httpStatus:)` keeps it; nil for a failure that carried none.
    package var v2ErrorCode: Substring? {
        switch code {
        case .httpStatus, .retryable, .authenticationRequired:
            guard let colon = message.firstIndex(of: ":") else { return nil }
            let code = message[..<colon]
            return !code.isEmpty && code.allSatisfy({ $0 == "_" || ("a"..."z").contains($0) || ("0"..."9").contains($0) }) ? code : nil
        case .denied: return denialCode.flatMap { $0.isEmpty ? nil : Substring($0) }
        default: return nil
        }
    }

    /// The service says an authentication session's code is unknown or expired
    /// (`invalid_authentication_session`): a newer session for the device replaced it, or it ran out,
    /// so its login page is dead.
    package var saysSessionIsGone: Bool { v2ErrorCode == "invalid_authentication_session" }

    /// The backend error for an HTTP status whose body is not an enhanced error (429's `text/html`,
    /// a proxy's page): throttling waits at least one second (V2 sends no `Retry-After`).
    package init(v2HTTPStatus status: Int) {
        self = status == 429 ? .throttled(retryAfterSeconds: 1) : .httpStatus(status, "")
    }
}

/// Retries for errors whose `action` is `retry`: at most twice, with a growing pause (Adobe's
/// *Enhanced Error Codes*: retry only `retry` codes, a few times, backing off).
package struct V2RetryPolicy: Sendable, Hashable {
    /// How many times a request is sent again (2 by default, at most 3).
    package let retries: Int
    /// The pause before the first retry; each next one doubles it.
    package let firstPause: Duration

    /// Creates a policy; `retries` is clamped to 0…3 and `firstPause` to 0…10 s.
    package init(retries: Int = 2, firstPause: Duration = .milliseconds(500)) {
        self.retries = min(max(retries, 0), 3)
        self.firstPause = min(max(firstPause, .zero), .seconds(10))
    }

    /// The pause before retry number `attempt` (1-based), or nil when no retry is left.
    package func pause(before attempt: Int) -> Duration? {
        guard attempt >= 1, attempt <= retries else { return nil }
        return firstPause * (1 << (attempt - 1))
    }
}
