/// A `status(_:)` the engine reports on its own (its refusals of calls, with their codes, are listed in *Call semantics*): the code,
/// its level and the condition that emits it. ``all`` is the one list of what `status` can say beside
/// refusals; every report the engine makes comes from one of these.
public struct Notice: Sendable, Hashable, CustomStringConvertible {
    /// The code, for example `N011` or `LOGIN_FAILED` (`CFG…` notices carry the HTTP status).
    public let code: String
    /// How serious it is.
    public let level: StatusReport.Level
    /// When the engine reports it.
    public let condition: String

    init(_ code: String, _ level: StatusReport.Level, _ condition: String) {
        self.code = code
        self.level = level
        self.condition = condition
    }

    /// The report of this notice with `message` (redacted, as every report is).
    public func report(_ message: String) -> StatusReport { StatusReport(code: code, level: level, message: message) }

    /// `CODE (level): condition`.
    public var description: String { "\(code) (\(level.rawValue)): \(condition)" }
}

extension Notice {
    // MARK: Configuration (setRequestor)

    /// `setRequestor`'s configuration failed with HTTP `status` (404: unreachable or timed out, 429:
    /// throttled, 500: a malformed answer, 400: refused).
    public static func configurationFailed(status: Int) -> Notice {
        Notice("CFG\(status)", .error, "setRequestor's configuration failed (HTTP \(status), or its equivalent)")
    }
    /// The stored tokens belong to another device id: cleared.
    public static let deviceMismatch = Notice("SEC412", .warning, "the stored tokens belong to another device id; they were cleared")
    /// A provider of the chain could not verify what the user may access at `setRequestor`.
    public static let providerVerificationFailed = Notice(
        ErrorCode.providerVerificationFailed, .warning, "a provider could not verify the user's access at setRequestor; its last answer stands")

    // MARK: Authentication

    /// Passive authentication started for an MVPD that authenticates per requestor.
    public static let passiveAuthentication = Notice("N001", .info, "passive authentication started (single sign-on, an MVPD per requestor)")
    /// The platform picker: the user chose "other TV provider".
    public static let platformOtherProvider = Notice("N003", .info, "the platform picker: another TV provider was chosen")
    /// The platform picker: an unsupported provider was chosen (the engine's picker follows).
    public static let platformUnsupportedProvider = Notice("N004", .info, "the platform picker: a provider it does not support was chosen")
    /// The platform picker was cancelled.
    public static let platformPickerCancelled = Notice("N005", .info, "the platform picker was cancelled")
    /// Signed in under a degradation rule.
    public static let degradedLogin = Notice("N010", .warning, "signed in under a degradation rule (the MVPD was not asked)")
    /// Signed in with TempPass.
    public static let tempPassLogin = Notice("N011", .info, "signed in with TempPass, with the minutes left")
    /// The TempPass is over (expired here, or ended by the service).
    public static let tempPassOver = Notice("N111", .warning, "the TempPass expired or the service ended it")
    /// A login failed (its profile could not be read, the session was not usable, …).
    public static let loginFailed = Notice("LOGIN_FAILED", .error, "a login failed: its session or its profile could not be had")
    /// A login passed its deadline before the redirect.
    public static let loginExpired = Notice("LOGIN_EXPIRED", .warning, "a login passed its deadline before the provider redirected back")
    /// The MVPD redirected back with an error.
    public static let redirectProviderError = Notice("REDIRECT_PROVIDER_ERROR", .error, "the MVPD redirected back with an error")
    /// A second screen's registration code to show.
    public static let registrationCode = Notice("REGCODE", .info, "a second screen: the registration code to show (the message)")
    /// No registration code could be had.
    public static let noRegistrationCode = Notice("REG500", .error, "a second screen: no registration code could be had")
    /// The registration code expired (here, or the service no longer knows it).
    public static let registrationCodeExpired = Notice("REGCODE_EXPIRED", .warning, "a second screen: the registration code expired, or the service refuses it and its session")

    // MARK: Logout

    /// The logout's request failed (local tokens were cleared).
    public static let logoutFailed = Notice("LOGOUT_FAILED", .warning, "the logout request failed; local tokens were cleared")
    /// The logout's redirect did not come back in time.
    public static let logoutTimedOut = Notice("LOGOUT_TIMED_OUT", .warning, "the logout redirect did not come back in time")
    /// A logout of a session from the platform's single sign-on.
    public static let platformLogout = Notice("VSA203", .info, "a logout of the platform's single sign-on: sign out in the platform's settings")

    // MARK: Authorization

    /// A denial by the MVPD (its words), or the authorization throttled.
    public static let authorizationDenied = Notice("Z100", .error, "a denial by the MVPD (its words), or the authorization throttled")
    /// A denial by a degradation rule.
    public static let degradationDenial = Notice("Z169", .error, "a denial by a degradation rule (AuthZNone)")
    /// A permit under a degradation rule.
    public static let degradedPermit = Notice("Z010", .warning, "a permit under a degradation rule")
    /// A permit under TempPass.
    public static let tempPassPermit = Notice("Z011", .info, "a permit under TempPass")
    /// Pre-authorization failed as a whole.
    public static let preauthorizationFailed = Notice("P100", .error, "pre-authorization failed as a whole")
    /// Pre-authorization left some items undecided.
    public static let preauthorizationPartial = Notice("P100", .warning, "pre-authorization left some items undecided")

    // MARK: The engine

    /// The token store could not save (the engine keeps its state in memory).
    public static let storageWriteFailed = Notice(
        ErrorCode.storageWriteFailed, .error, "the token store could not save what a step changed that nothing could refuse")
    /// The engine was closed before a call was answered.
    public static let sessionClosed = Notice(ErrorCode.sessionClosed, .warning, "the engine was closed before the call was answered")

    /// Every notice (`CFG…` once, for its family).
    public static let all: [Notice] = [
        configurationFailed(status: 404), deviceMismatch, providerVerificationFailed, passiveAuthentication, platformOtherProvider,
        platformUnsupportedProvider, platformPickerCancelled, degradedLogin, tempPassLogin, tempPassOver, loginFailed, loginExpired,
        redirectProviderError, registrationCode, noRegistrationCode, registrationCodeExpired, logoutFailed, logoutTimedOut,
        platformLogout, authorizationDenied, degradationDenial, degradedPermit, tempPassPermit, preauthorizationFailed,
        preauthorizationPartial, storageWriteFailed, sessionClosed,
    ]
}
