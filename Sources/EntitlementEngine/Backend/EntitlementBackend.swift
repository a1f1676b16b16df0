/// The one seam to the entitlement service (the "programmer backend" and, behind it, the MVPDs).
///
/// The engine calls it from child tasks; each answer comes back to the machine as an input.
/// `EntitlementSimulator` implements it in process; a production port speaks HTTP.
public protocol EntitlementBackend: Sendable {
    /// Performs `request` and returns the matching response, or a typed error.
    func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse

    /// Performs `request`, knowing the engine's id for it (use it as a correlation id, or to
    /// order answers deterministically). The default forwards to ``perform(_:)``.
    func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError) -> BackendResponse
}

extension EntitlementBackend {
    /// Forwards to ``perform(_:)``.
    public func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError)
        -> BackendResponse
    {
        try await perform(request)
    }
}
