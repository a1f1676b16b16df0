import EntitlementEngine
import EntitlementHTTP
import EntitlementProviders
import EntitlementSimulator
import EntitlementSupport

/// A server-based provider's transport in process: each request goes to the simulator's programmer
/// service `serverID` as the HTTP server would hand it over (the form from the body).
package struct SimulatedProgrammerTransport: ProviderTransport {
    let simulator: Simulator
    let serverID: String

    /// A transport to the programmer's service `serverID` of `simulator`.
    package init(simulator: Simulator, serverID: String) {
        self.simulator = simulator
        self.serverID = serverID
    }

    /// The service's answer.
    package func send(_ request: V2OutgoingRequest) async -> Result<ProviderHTTPAnswer, ProviderFailure> {
        Self.answer(await simulator.programmerAuthorization(serverID: serverID, form: Self.form(request)))
    }

    /// The request's form: its body, or for a GET its query.
    static func form(_ request: V2OutgoingRequest) -> [String: String] {
        let text = request.method == "GET" ? String(request.url.split(separator: "?", maxSplits: 1).dropFirst().first ?? "")
            : String(decoding: request.body, as: UTF8.self)
        return FormCoding.decode(Substring(text))
    }

    static func answer(_ answer: ProgrammerAnswer) -> Result<ProviderHTTPAnswer, ProviderFailure> {
        switch answer {
        case .http(let status, let contentType, let body): .success(ProviderHTTPAnswer(status: status, contentType: contentType, body: body))
        case .noAnswer: .failure(.networkFailure)
        }
    }
}

/// A subscription provider's transport in process: the operation is the URL's last path component
/// (`…/verify_subscription/`), the form its body or query.
package struct SimulatedSecurityAPITransport: ProviderTransport {
    let simulator: Simulator
    let providerID: String

    /// A transport to the Security API of subscription `providerID` of `simulator`.
    package init(simulator: Simulator, providerID: String) {
        self.simulator = simulator
        self.providerID = providerID
    }

    /// The service's answer.
    package func send(_ request: V2OutgoingRequest) async -> Result<ProviderHTTPAnswer, ProviderFailure> {
        let path = request.url.split(separator: "?", maxSplits: 1)[0]
        let operation = String(path.split(separator: "/").last ?? "")
        return SimulatedProgrammerTransport.answer(
            await simulator.securityAPI(providerID: providerID, operation: operation, form: SimulatedProgrammerTransport.form(request)))
    }
}
