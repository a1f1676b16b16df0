/// The payload of the `status` callback (Adobe's advanced status): refusals, configuration errors
/// and informational notices.
public struct StatusReport: Sendable, Hashable, Codable {
    /// How serious the report is.
    public enum Level: String, Sendable, Hashable, Codable {
        /// Informational.
        case info
        /// Something degraded, the flow goes on.
        case warning
        /// A call was refused or failed.
        case error
    }

    /// The code, for example `REDIRECT_STATE_MISMATCH` or `CFG404`.
    public var code: String
    /// How serious it is.
    public var level: Level
    /// A sentence for people; never contains a secret (it goes through ``Redactor/redact(_:)``
    /// when the report is made, whatever built it: an MVPD's `error_description` is not trusted).
    public var message: String

    /// Creates a status report; the message is redacted and bounded here.
    package init(code: String, level: Level, message: String) {
        self.code = code
        self.level = level
        self.message = Redactor.redact(message)
    }
}
