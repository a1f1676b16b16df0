import EntitlementEngine
import EntitlementHTTP
import EntitlementSupport

/// A provider that asks the programmer's own service (libPusher's server-based channel authorization):
/// an HTTP POST of the device, the session and the resource, form-encoded, to one URL; authorized only
/// when the service answers 200 or 201 with a JSON object, whose text is handed to the app by
/// `setToken`.
///
/// - It claims the resources it was configured with (`resources`): the programmer's service decides
///   each request.
/// - Requests go through the request-decoration hook (`decorate`), the same type the REST API V2
///   transport takes: add the credentials your service wants (a bearer token, an API key); no cookies.
/// - At most ``concurrentLimit`` requests run at once; the others wait (off the engine's actor).
/// - An answer for a session that has since changed (the app set the requestor again, logged out) is
///   ignored: the engine ended that request already, and the request carries its `session_id`
///   (device and configuration) so the service can tell sessions apart.
///
/// Policy advice (ForgeRock's): a 401 whose JSON has `advices` (`TransactionConditionAdvice: [txId]`,
/// `AuthenticateToServiceConditionAdvice: [service]`) is `ProviderFailure.stepUpRequired(_:)`; for a
/// resource configured for step-up the engine asks the app, and its one retry carries `_txId`.
///
/// Failures: no answer → `ProviderFailure.networkFailure`; 401 or 403 → `ProviderFailure.denied(_:)`
/// with the service's `message` (or `error`) when its body says one; another status, or a body that is
/// not a JSON object → `ProviderFailure.unknown(_:)` saying which.
public final class ServerAuthorizationProvider: EntitlementProvider {
    /// The provider's id in the chain.
    public let id: String
    /// The service's URL.
    package let url: String
    /// The resources the service decides.
    package let resources: Set<String>
    /// At most this many requests at once (default 5, as libPusher).
    public var concurrentLimit: Int { turns.limit }
    /// Sees every request last; may add or change headers.
    package let decorate: (@Sendable (inout V2OutgoingRequest) async -> Void)?
    private let transport: any ProviderTransport
    private let turns: TurnGate

    /// A provider posting to `url` for `resources`.
    public init(
        id: String = "server", url: String, resources: Set<String>, concurrentLimit: Int = 5,
        transport: any ProviderTransport = HTTPProviderTransport(),
        decorate: (@Sendable (inout V2OutgoingRequest) async -> Void)? = nil
    ) {
        self.id = id
        self.url = url
        self.resources = resources
        self.transport = transport
        self.decorate = decorate
        self.turns = TurnGate(limit: concurrentLimit)
    }

    /// The configured resources: the service answers for them, request by request.
    public func verify(_ session: ProviderSession) async -> Result<ProviderView, ProviderFailure> {
        .success(ProviderView(resources: resources))
    }

    /// Posts `device_id`, `session_id` and `resource`; the JSON object the service answers is the token.
    public func credentials(for resource: String, _ session: ProviderSession) async -> Result<ProviderCredentials, ProviderFailure> {
        var fields = [("device_id", session.deviceID), ("session_id", session.sessionID), ("resource", resource)]
        if let transaction = session.transactionID { fields.append(("_txId", transaction)) }
        var request = V2OutgoingRequest(
            operation: "serverAuthorization", method: "POST", url: url,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"],
            body: Array(FormCoding.encode(fields).utf8))
        if let decorate { await decorate(&request) }
        let outgoing = request
        // A request the engine gave up on while it waited for a place is never sent: it ends as a cancelled
        // exchange would.
        let answer = await turns.run({ await transport.send(outgoing) }, cancelled: .failure(.networkFailure))
        return answer.flatMap { Self.read($0, resource: resource) }
    }

    /// What an answer means.
    static func read(_ answer: ProviderHTTPAnswer, resource: String) -> Result<ProviderCredentials, ProviderFailure> {
        let text = String(decoding: answer.body, as: UTF8.self)
        let json = try? JSONReader.read(text)
        switch answer.status {
        case 200, 201:
            guard case .object = json else { return .failure(.unknown("the authorization server's answer is not a JSON object")) }
            return .success(ProviderCredentials(token: text))
        case 401 where json?["advices"]?.object != nil:
            guard let advice = advice(json?["advices"]) else {
                return .failure(.unknown("the authorization server's advice is not one this provider takes"))
            }
            return .failure(.stepUpRequired(advice))
        case 401, 403:
            let said = json?["message"]?.string ?? json?["error"]?.string
            return .failure(.denied(said.map { String($0.prefix(300)) } ?? "The authorization server refused '\(resource)'."))
        default:
            return .failure(.unknown("the authorization server answered HTTP \(answer.status)"))
        }
    }

    /// ForgeRock's `advices` object: `TransactionConditionAdvice: [txId]` or
    /// `AuthenticateToServiceConditionAdvice: [service]`.
    static func advice(_ advices: JSONValue?) -> StepUpAdvice? {
        if let id = advices?["TransactionConditionAdvice"]?.array?.first?.string, !id.isEmpty {
            return StepUpAdvice(kind: .transaction, value: "TransactionConditionAdvice", transactionID: id)
        }
        if let service = advices?["AuthenticateToServiceConditionAdvice"]?.array?.first?.string, !service.isEmpty {
            return StepUpAdvice(kind: .authenticateToService, value: service)
        }
        return nil
    }
}
