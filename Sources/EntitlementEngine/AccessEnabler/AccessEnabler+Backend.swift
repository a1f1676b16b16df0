/// Backend requests as tasks whose answers come back as inputs. Their deadlines are the machine's timers
/// (`TimerID.requestDeadline(_:)`): when one passes first, the machine takes the request as timed out and
/// says to stop it (`Action.cancelRequest(_:)`), and an answer after that is dropped.
extension AccessEnabler {
    /// Sends `request` as a task; its answer goes to the machine unless the request was stopped first.
    func startBackendTask(_ operation: OperationID, _ request: BackendRequest) {
        monitor?.observe(.backendRequested(operation, SentRequest(request)))
        state.operationsInFlight.insert(operation)
        let backend = self.backend
        let tracer = monitor?.tracer
        let attributes = tracer == nil ? [:] : spanAttributes(request.context.requestorID)
        let task = environment.startTask(on: self) {
            let result: Result<BackendResponse, BackendError>
            do throws(BackendError) {
                let perform = { () async throws(BackendError) -> BackendResponse in try await backend.perform(request, operation: operation) }
                if let tracer {
                    let name = "entitle.backend.\(request.operation.rawValue)"
                    result = .success(try await tracer.spanning(name, attributes, outcome: { $0.code.description }, perform))
                } else {
                    result = .success(try await perform())
                }
            } catch {
                result = .failure(error)
            }
            await self.requestEnded(operation, request, result)
        }
        state.backendRequests[operation] = task
    }

    /// A request's answer goes to the machine, unless the request was stopped at its deadline.
    private func requestEnded(_ operation: OperationID, _ request: BackendRequest, _ result: Result<BackendResponse, BackendError>) async {
        guard state.backendRequests.removeValue(forKey: operation) != nil else { return }
        await deliverAnswer(operation, request, result)
    }

    /// Stops a request the machine took as timed out (`Action.cancelRequest(_:)`): its task is cancelled and
    /// whatever it answers is dropped. The monitor sees a backend request end as timed out, as it would
    /// have ended had the service said so.
    func cancelRequest(_ operation: OperationID) {
        guard let task = state.backendRequests.removeValue(forKey: operation) else { return }
        task.cancel()
        if !state.providerOperations.contains(operation) { monitor?.observe(.backendFinished(operation, RequestOutcome(.failure(.timeout)))) }
        operationFinished(operation)
    }

    private func deliverAnswer(
        _ operation: OperationID, _ request: BackendRequest, _ result: Result<BackendResponse, BackendError>
    ) async {
        defer { operationFinished(operation) }
        monitor?.observe(.backendFinished(operation, RequestOutcome(result)))
        let work: Work
        if case .configuration(let context) = request {
            work = .configurationAnswered(operation, requestorID: context.requestorID, result)
        } else {
            switch result {
            case .success(let response): work = .input(.backendAnswered(operation, response))
            case .failure(let error): work = .input(.backendFailed(operation, error))
            }
        }
        await enqueueAndWait(work)
    }

    /// A machine timer is due: its input runs, the clock that fired it waiting for it (a manual clock's
    /// timers thus run one after another, each to its end).
    func deliverTimer(_ timer: TimerID) async {
        state.timers[timer] = nil
        await enqueueAndWait(.input(.timerFired(timer)))
    }

    /// Marks `operation` done once its answer has been processed, and wakes whoever waits for it.
    func operationFinished(_ operation: OperationID) {
        state.operationsInFlight.remove(operation)
        if state.providerOperations.remove(operation) != nil, state.providerOperations.isEmpty { state.waiters.resume(.providersAnswered) }
        state.waiters.resume(.finished(operation))
        resumeIdleWaitersIfIdle()
    }
}
