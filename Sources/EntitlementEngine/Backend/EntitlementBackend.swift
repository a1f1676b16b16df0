/// What an engine talks to: Adobe Pass REST API V2 through a ``V2Client`` (in tests, one on the
/// simulator), alone or behind a ``SharedConfigurationBackend``. `AccessEnabler(backend:)` and
/// `SessionHost(backend:)` take any of them.
///
/// The requests and answers that cross it are the package's own (they may change in any version), so a
/// service is one of the package's types; a type of yours can only stand for one of them by returning
/// its ``port``.
public protocol EntitlementService: Sendable {
    /// The backend port the engine sends its requests to.
    var port: BackendPort { get }
}

/// The backend port behind an ``EntitlementService``: what the engine sends its requests to. Only the
/// package makes one.
public struct BackendPort: Sendable {
    /// The port itself.
    package let backend: any EntitlementBackend

    package init(_ backend: any EntitlementBackend) { self.backend = backend }
}

/// The one seam to the entitlement service (the "programmer backend" and, behind it, the MVPDs).
///
/// The engine calls it from child tasks; each answer comes back to the machine as an input.
/// `EntitlementSimulator` implements it in process; ``V2Client`` speaks REST API V2.
package protocol EntitlementBackend: EntitlementService {
    /// Performs `request` and returns the matching response, or a typed error.
    func perform(_ request: BackendRequest) async throws(BackendError) -> BackendResponse

    /// Performs `request`, knowing the engine's id for it (use it as a correlation id, or to
    /// order answers deterministically). The default forwards to ``perform(_:)``.
    func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError) -> BackendResponse
}

extension EntitlementBackend {
    /// Forwards to ``perform(_:)``.
    package func perform(_ request: BackendRequest, operation: OperationID) async throws(BackendError)
        -> BackendResponse
    {
        try await perform(request)
    }

    /// This backend itself.
    package var port: BackendPort { BackendPort(self) }
}
