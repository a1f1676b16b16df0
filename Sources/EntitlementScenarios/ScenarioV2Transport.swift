import EntitlementEngine
import EntitlementHTTP
import EntitlementSimulator
import EntitlementV2

/// An engine's REST API V2 client transport in a scenario run over HTTP. A request the simulator will
/// time out (an injected `timeout` fault) goes with ``ScenarioRunner/httpTimeout``, the deadline such a
/// fault costs; every other goes with ``ScenarioRunner/httpPatience``, a deadline that only ends a hang.
/// A client that gave up on a timed-out request returns only once the simulator took the fault (the request
/// reached it): on a loaded machine the request can arrive after the client's deadline, and would otherwise
/// take a fault the scenario injects next. So a scenario's outcome never depends on how fast a loaded
/// machine answers on loopback.
struct ScenarioV2Transport: V2Transport {
    private let timingOut: HTTPV2Transport
    private let answered: HTTPV2Transport
    private let service: SimulatedV2Service

    init(baseURL: String, service: SimulatedV2Service) {
        timingOut = HTTPV2Transport(baseURL: baseURL, timeout: ScenarioRunner.httpTimeout, pacing: .afterThrottleOnly)
        answered = HTTPV2Transport(baseURL: baseURL, timeout: ScenarioRunner.httpPatience, pacing: .afterThrottleOnly)
        self.service = service
    }

    func send(_ request: V2Request, context: V2RequestContext) async throws(BackendError) -> V2Response {
        guard await service.timesOut(request, context: context), let taken = await service.faultsTaken(request, context: context) else {
            return try await answered.send(request, context: context)
        }
        do throws(BackendError) {
            return try await timingOut.send(request, context: context)
        } catch {
            // Until the fault is taken, the run's patience ends, or the run is cancelled (a sleep then throws at once).
            let patience = ContinuousClock.now + ScenarioRunner.httpPatience
            while let now = await service.faultsTaken(request, context: context), now == taken, ContinuousClock.now < patience {
                do { try await Task.sleep(for: .milliseconds(5)) } catch { break }
            }
            throw error
        }
    }
}
