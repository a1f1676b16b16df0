/// Starts spans around the engine's backend requests and token-storage operations — the shape of
/// swift-distributed-tracing's `Tracer` (a start with attributes; a span that takes more attributes,
/// records errors and ends once), so an adapter to it, or to any other tracing system, is a few lines
/// (*Logs and metrics* shows one). Give it to ``EngineTelemetry`` (`tracer:`).
///
/// Spans: `entitle.backend.OPERATION` (`createSession`, `authorize`, …) and `entitle.storage.load`,
/// `.save`, `.version`, `.authentications`, with the attributes `entitle.device` (the device's
/// pseudonym), `entitle.requestor` and, at the end, `entitle.outcome` (`ok`, or the failure's code); a
/// failure is also recorded as the span's error. Attributes never hold a secret or personal data. A
/// version the store knows at once (`TokenStorage.knownVersion`) is no operation and has no span.
public protocol EngineTracer: Sendable {
    /// Starts a span named `operationName` with `attributes`; the engine ends it once.
    func startSpan(_ operationName: String, attributes: [String: String]) -> any EngineSpan
}

/// One span ``EngineTracer`` started.
public protocol EngineSpan: Sendable {
    /// Sets an attribute.
    func setAttribute(_ name: String, _ value: String)
    /// Records that the operation failed with `error`.
    func recordError(_ error: any Error)
    /// Ends the span (called once).
    func end()
}

extension EngineTracer {
    /// Runs `body` in a span named `name`: its outcome set, its error recorded, ended whatever happens.
    package func spanning<T, E: Error>(
        _ name: String, _ attributes: [String: String], outcome: (E) -> String, isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(E) -> T
    ) async throws(E) -> T {
        let span = startSpan(name, attributes: attributes)
        defer { span.end() }
        do throws(E) {
            let value = try await body()
            span.setAttribute("entitle.outcome", "ok")
            return value
        } catch {
            span.setAttribute("entitle.outcome", outcome(error))
            span.recordError(error)
            throw error
        }
    }
}
