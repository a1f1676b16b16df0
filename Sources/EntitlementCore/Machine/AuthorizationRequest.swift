/// One authorization request machine, keyed by resource and data; identical concurrent requests
/// join it and each gets its own answer.
package struct AuthorizationRequest: Sendable, Hashable {
    /// Where the request is.
    package enum Phase: Sendable, Hashable {
        /// `getAuthorization` started (or joined) a login: waits for it to end.
        case waitingForAuthentication
        /// Waits for the backend's decision (which carries the media token).
        case authorizing(OperationID)
        /// Waits for a provider of the chain (by id) to give its credentials.
        case askingProvider(String, OperationID)
        /// Waits for the provider's request running before it to end (a provider that takes one at a time).
        case waitingForProvider(String)
        /// Waits for the app's step-up (`completeStepUp`) after the provider's answer (operation) carried advice,
        /// until the step-up's deadline.
        case awaitingStepUp(String, StepUpAdvice, answered: OperationID, until: Timestamp)
        /// Waits for the outcome of a step-up (by its advice) another instance holds or completes (its
        /// ``PendingStepUp`` in the store), until its record stops standing; the operation names the timer.
        case awaitingStepUpElsewhere(OperationID, StepUpAdvice, until: Timestamp)
    }

    /// The resource.
    package var resource: String
    /// The `data` passed with the call (part of the identity of a request).
    package var data: [String: String]
    /// The calls waiting for this request, in arrival order.
    package var waiters: [CallID]
    /// Where the request is.
    package var phase: Phase
    /// Waiting (``Phase/waitingForProvider(_:)``) for the provider's token to be renewed, not for
    /// another request to end.
    package var awaitsRenewal = false
    /// Set once the request stepped up: its retry carries this transaction id, and no second step-up is asked.
    package var steppedUp = false
    /// The transaction the step-up approved (a secret, sent once).
    package var transactionID: String?
    /// The provider's user token the last credentials request carried (a secret): an answer calling it
    /// invalid after the store took a newer one is asked again with that, not renewed.
    package var askedWith: String?

    /// Creates a request.
    package init(resource: String, data: [String: String], waiters: [CallID], phase: Phase) {
        self.resource = resource
        self.data = data
        self.waiters = waiters
        self.phase = phase
    }

    /// Whether this request is the authorization `record` is for.
    func isFor(_ record: PendingStepUp) -> Bool { record.isFor(resource, data) }

    /// The pending backend operation, if any.
    var operation: OperationID? {
        switch phase {
        case .waitingForAuthentication, .waitingForProvider, .awaitingStepUp, .awaitingStepUpElsewhere: nil
        case .authorizing(let operation), .askingProvider(_, let operation): operation
        }
    }
}
