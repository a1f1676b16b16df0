/// Backend requests with their deadlines, and timers.
extension AccessEnabler {
    /// Sends `request` with a deadline (``EngineSettings/requestTimeout``): whichever comes first,
    /// the answer or the deadline, is the request's one result; the other is dropped.
    func startBackendTask(_ operation: OperationID, _ request: BackendRequest) {
        monitor?.observe(.backendRequested(operation, request))
        operationsInFlight.insert(operation)
        let backend = self.backend
        let tracer = monitor?.tracer
        let attributes = tracer == nil ? [:] : spanAttributes(request.context.requestorID)
        let task = Task(executorPreference: environment.taskExecutor) {
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
        let deadline = environment.clock.now().adding(machine.settings.requestTimeout)
        let timer = environment.clock.schedule(at: deadline) { [weak self] in
            await self?.requestEnded(operation, request, .failure(.timeout), cancellingRequest: true)
        }
        backendRequests[operation] = (task, timer)
    }

    /// The first result of a request (its answer, or its deadline) goes to the machine; a second is dropped.
    private func requestEnded(
        _ operation: OperationID, _ request: BackendRequest, _ result: Result<BackendResponse, BackendError>,
        cancellingRequest: Bool = false
    ) async {
        guard let running = backendRequests.removeValue(forKey: operation) else { return }
        running.deadline.cancel()
        if cancellingRequest { running.task.cancel() }
        await deliverAnswer(operation, request, result)
    }

    private func deliverAnswer(
        _ operation: OperationID, _ request: BackendRequest, _ result: Result<BackendResponse, BackendError>
    ) async {
        defer { operationFinished(operation) }
        monitor?.observe(.backendFinished(operation, result))
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

    func deliverTimer(_ timer: TimerID) async {
        timers[timer] = nil
        await enqueueAndWait(.input(.timerFired(timer)))
    }

    /// Marks `operation` done once its answer has been processed, and wakes whoever waits for it.
    func operationFinished(_ operation: OperationID) {
        operationsInFlight.remove(operation)
        if providerOperations.remove(operation) != nil, providerOperations.isEmpty { waiters.resume(.providersAnswered) }
        waiters.resume(.finished(operation))
        resumeIdleWaitersIfIdle()
    }
}
