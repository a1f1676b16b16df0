import EntitlementEngine
import EntitlementSupport

#if canImport(FoundationNetworking)
    import Foundation
    import FoundationNetworking
#else
    import Foundation
#endif

/// REST API V2 over HTTP: the `V2Transport` a `V2Client` sends through to Adobe Pass (or to
/// `entitle serve`), on libcurl's multi interface (Linux's default) or on `URLSession` (Apple's) — its
/// ``HTTPStack``. Both behave as described here, and the package's tests run each on both.
///
/// Each request carries exactly the documented headers (Adobe's REST API V2 header pages): `Authorization: Bearer`,
/// `AP-Device-Identifier: fingerprint <base64>`, `X-Device-Info` (base64 JSON), `X-Forwarded-For`,
/// `AP-Visitor-Identifier`, `AP-TempPass-Identity` — each only where the request's context has it —
/// plus `Accept: application/json` and the body's `Content-Type`. The `decorate` hook sees every
/// request last and may change its headers; a header it makes that could end its line (CR, LF, NUL)
/// or that is not a field name is refused unsent (`.network("a header field is not valid")`).
///
/// Answers: every HTTP status is a `V2Response`; a body is JSON only when its `Content-Type` says
/// so and it parses (else `bodyProblem` says why); a body over `bodyLimit` is refused as soon as it
/// passes the limit, while it is read; a redirect is not followed (V2 sends none; following one could
/// carry the bearer token elsewhere) and is read as its status. No HTTP answer at all is a thrown
/// `BackendError`: `.timeout` once `timeout` has passed since the request was sent — a total
/// deadline, however slowly the server trickles its answer — `.network` for a refused, reset or failed
/// connection — described without the URL, which may hold a session code. A cancelled task
/// cancels its request. Its ``V2Pacing`` keeps each device under V2's throttle.
///
/// At most `connectionsPerHost` exchanges run at once; the others wait in order (a cancelled one
/// leaves the line). Each exchange is reported as a ``V2Exchange`` — to `log` and, with `metrics`, as
/// the timers `entitle.transport.pacing`, `entitle.transport.connection_wait` and
/// `entitle.transport.service` (`operation`, `outcome`: the status or the failure's kind) and the
/// gauges `entitle.transport.running` and `entitle.transport.waiting`; the limit itself is the gauge
/// `entitle.transport.connections_per_host`, recorded once.
public final class HTTPV2Transport: V2Transport {
    /// The service's base URL (one of `AdobePassHost`'s, or `entitle serve`'s URL).
    package let baseURL: String
    /// How long one exchange may take in all, from sending the request to the last byte of its answer.
    package let timeout: Duration
    /// Called before every request; may add or change headers.
    package let decorate: (@Sendable (inout V2OutgoingRequest) async -> Void)?
    /// Every exchange, as it ends (its `description` is a log line; its `level` says how loud).
    package let log: (@Sendable (V2Exchange) -> Void)?
    /// The largest answer body read (a bigger one is an unreadable answer, not a memory hazard).
    package let bodyLimit: Int
    /// How many exchanges with the service may run at once (1…1,024; the rest wait for one to end).
    package let connectionsPerHost: Int
    /// The HTTP stack the exchanges run on (the one asked for, or `URLSession` where libcurl could not be opened).
    public let stack: HTTPStack
    private let metrics: (any EngineMetricsHandler)?
    private let exchanger: Exchanger
    private let pacer: V2Pacer
    private let gate: TurnGate

    /// A transport to `baseURL` on `stack`; `connectionsPerHost` is clamped to 1…1,024.
    /// `log` comes before `decorate`, so a trailing closure is the log (`{ exchange in … }`); the hook
    /// that changes requests is always written `decorate: { request in … }`.
    public init(
        baseURL: String, timeout: Duration = .seconds(30), pacing: V2Pacing = .adobe, bodyLimit: Int = 1024 * 1024,
        connectionsPerHost: Int = 16, stack: HTTPStack = .platformDefault, metrics: (any EngineMetricsHandler)? = nil,
        log: (@Sendable (V2Exchange) -> Void)? = nil, decorate: (@Sendable (inout V2OutgoingRequest) async -> Void)? = nil
    ) {
        self.baseURL = baseURL.hasSuffix("/") ? String(baseURL.dropLast()) : baseURL
        self.timeout = timeout
        self.decorate = decorate
        self.log = log
        self.metrics = metrics
        self.pacer = V2Pacer(pacing: pacing)
        self.bodyLimit = max(bodyLimit, 1)
        self.connectionsPerHost = min(max(connectionsPerHost, 1), 1024)
        self.gate = TurnGate(limit: self.connectionsPerHost)
        (exchanger, self.stack) = Exchanger.make(stack, bodyLimit: self.bodyLimit, timeout: timeout, connectionsPerHost: self.connectionsPerHost)
        metrics?.record(gauge: "entitle.transport.connections_per_host", dimensions: [], value: Int64(self.connectionsPerHost))
    }

    deinit { exchanger.close() }

    /// Sends `request` with the headers `context` describes.
    package func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
        let paceKey = context.forwardedFor ?? context.deviceID ?? ""
        let arrived = ContinuousClock.now
        do {
            try await pacer.admit(paceKey)
        } catch {
            throw .network("cancelled")
        }
        let paced = ContinuousClock.now
        var outgoing = Self.outgoing(request, context: context, baseURL: baseURL)
        if let decorate { await decorate(&outgoing) }
        let queued = ContinuousClock.now
        guard await gate.enter() else { throw .network("cancelled") }
        defer {
            gate.leave()
            reportCounts()
        }
        reportCounts()
        let started = ContinuousClock.now
        let result: Result<V2Response, BackendError>
        do {
            let answer = try await exchange(outgoing)
            if answer.status == 429 { await pacer.throttled(paceKey) }
            result = .success(answer)
        } catch {
            result = .failure(error)
        }
        // The record (a redacted target, a keyed pseudonym) is made only for someone who reads it.
        if log != nil || metrics != nil {
            let outcome: V2Exchange.Outcome =
                switch result {
                case .success(let answer): .status(answer.status)
                case .failure(let error): .failed(error)
                }
            report(
                V2Exchange(
                    method: outgoing.method, operation: request.operation, target: Redactor.redact(request.target),
                    session: context.deviceID.map { DevicePseudonym.of($0) } ?? "", outcome: outcome, pacing: paced - arrived,
                    connectionWait: started - queued, service: ContinuousClock.now - started))
        }
        return try result.get()
    }

    /// Hands an ended exchange to the log and the metrics.
    private func report(_ exchange: V2Exchange) {
        log?(exchange)
        guard let metrics else { return }
        let dimensions = [("operation", exchange.operation), ("outcome", exchange.outcomeName)]
        metrics.record(timer: "entitle.transport.pacing", dimensions: dimensions, nanoseconds: exchange.pacing.nanoseconds)
        metrics.record(
            timer: "entitle.transport.connection_wait", dimensions: dimensions, nanoseconds: exchange.connectionWait.nanoseconds)
        metrics.record(timer: "entitle.transport.service", dimensions: dimensions, nanoseconds: exchange.service.nanoseconds)
    }

    /// The gauges of running and waiting exchanges, as they are now.
    private func reportCounts() {
        guard let metrics else { return }
        let (running, waiting) = gate.counts
        metrics.record(gauge: "entitle.transport.running", dimensions: [], value: Int64(running))
        metrics.record(gauge: "entitle.transport.waiting", dimensions: [], value: Int64(waiting))
    }

    // MARK: - Building

    /// The request as sent: URL, documented headers and body (`V2OutgoingRequest.init(_:context:baseURL:)`).
    static func outgoing(_ request: V2Request, context: V2RequestContext, baseURL: String) -> V2OutgoingRequest {
        V2OutgoingRequest(request, context: context, baseURL: baseURL)
    }

    /// One exchange: an HTTP answer (a body over the limit is a `bodyProblem`) or a thrown failure.
    private func exchange(_ request: V2OutgoingRequest) async throws(BackendError) -> V2Response {
        switch await exchanger.exchange(request, within: timeout) {
        case .answered(let status, let contentType, let body): return Self.read(status: status, contentType: contentType, body: body)
        case .tooLarge(let status): return V2Response(status: status, body: nil, bodyProblem: "the body is larger than \(bodyLimit) bytes")
        case .timedOut: throw .timeout
        case .failed(let failure): throw failure
        }
    }

    /// An HTTP answer as V2's: JSON only when labelled and parsed.
    static func read(status: Int, contentType: String, body data: [UInt8]) -> V2Response {
        guard !data.isEmpty else { return V2Response(status: status, body: nil) }
        let type = contentType.lowercased()
        let mediaType = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        guard mediaType == "application/json" || mediaType.hasSuffix("+json") else {
            return V2Response(status: status, body: nil, bodyProblem: "Content-Type '\(mediaType.prefix(40))', not JSON")
        }
        do {
            return V2Response(status: status, body: try JSONReader.read(data))
        } catch {
            return V2Response(status: status, body: nil, bodyProblem: "the body is not JSON (\(error))")
        }
    }
}

extension V2Client {
    /// A client of Adobe Pass REST API V2 on `transport`, registering `softwareStatement` once (its
    /// credentials kept in `credentials`) and sending every request with an access token that is
    /// refreshed `refreshMargin` before it expires; `devices` says, for a device id, what the device
    /// says of itself (`X-Device-Info`, its public address, visitor id and TempPass identity).
    public init(
        transport: HTTPV2Transport, softwareStatement: String, credentials: any V2CredentialStore = InMemoryV2CredentialStore(),
        baseURL: String, clock: any EngineClock, refreshMargin: Duration = .seconds(60),
        devices: @escaping @Sendable (String) -> V2Device = { _ in V2Device() }, tokenFetchTimeout: Duration = .seconds(30)
    ) {
        self.init(
            transport: transport as any V2Transport, softwareStatement: softwareStatement, credentials: credentials, baseURL: baseURL,
            clock: clock, refreshMargin: refreshMargin, devices: devices, tokenFetchTimeout: tokenFetchTimeout)
    }
}

/// The name ``HTTPV2Transport`` had before it ran on libcurl as well as on `URLSession`.
@available(*, deprecated, renamed: "HTTPV2Transport")
public typealias URLSessionV2Transport = HTTPV2Transport
