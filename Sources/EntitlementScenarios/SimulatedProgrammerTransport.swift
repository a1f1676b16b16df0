import EntitlementEngine
import EntitlementHTTP
import EntitlementProviders
import EntitlementSimulator

/// A server-based provider's transport in process: each request goes to the simulator's programmer
/// service `serverID` as the HTTP server would hand it over (the form from the body).
struct SimulatedProgrammerTransport: ProviderTransport {
    let simulator: Simulator
    let serverID: String

    func send(_ request: V2OutgoingRequest) async -> Result<ProviderHTTPAnswer, ProviderFailure> {
        var form: [String: String] = [:]
        for pair in String(decoding: request.body, as: UTF8.self).split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard parts.count == 2, let name = try? PercentEncoding.decode(parts[0]),
                let value = try? PercentEncoding.decode(parts[1])
            else { continue }
            form[name] = value
        }
        switch await simulator.programmerAuthorization(serverID: serverID, form: form) {
        case .http(let status, let contentType, let body): return .success(ProviderHTTPAnswer(status: status, contentType: contentType, body: body))
        case .noAnswer: return .failure(.networkFailure)
        }
    }
}
