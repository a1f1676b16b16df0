/// REST API V2's enhanced error codes with the HTTP status and `action` the reference lists
/// (Adobe's *Enhanced Error Codes*): what a client can expect of each, and what a simulated refusal
/// looks like.
public enum V2ErrorCatalogue {
    /// Every code, with its status and action.
    package static let entries: [String: (status: Int64, action: V2EnhancedError.Action)] = {
        var entries: [String: (Int64, V2EnhancedError.Action)] = [:]
        for code in [
            "invalid_parameter_service_provider", "invalid_parameter_mvpd", "invalid_parameter_code",
            "invalid_parameter_resources", "invalid_parameter_redirect_url", "invalid_parameter_partner",
            "invalid_parameter_saml_response", "invalid_header_device_info", "invalid_header_device_identifier",
            "invalid_header_identity_for_temporary_access", "invalid_integration", "invalid_authentication_session",
        ] { entries[code] = (400, .none) }
        for code in [
            "preauthorization_denied_by_mvpd", "authorization_denied_by_mvpd", "authorization_denied_by_parental_controls",
            "authorization_denied_by_degradation_rule",
        ] { entries[code] = (403, .none) }
        entries["internal_server_error"] = (500, .none)
        entries["too_many_resources"] = (403, .configuration)
        for code in [
            "invalid_configuration_user_metadata_certificate", "invalid_configuration_temporary_access",
            "invalid_configuration_platform", "invalid_configuration_mvpd_platform",
        ] { entries[code] = (500, .configuration) }
        for code in ["invalid_access_token_service_provider", "invalid_access_token_client_application"] {
            entries[code] = (401, .applicationRegistration)
        }
        for code in [
            "authenticated_profile_missing", "authenticated_profile_expired", "authenticated_profile_invalidated",
            "temporary_access_duration_limit_exceeded", "temporary_access_resources_limit_exceeded",
            "authorization_denied_by_hba_policies", "authorization_denied_by_session_invalidated",
            "identity_not_recognized_by_mvpd",
        ] { entries[code] = (403, .authentication) }
        for code in ["network_received_error", "network_connection_timeout", "maximum_execution_time_exceeded"] {
            entries[code] = (403, .retry)
        }
        return entries
    }()

    /// The error `code` as the service sends it (with Adobe's support `trace` id, if any), or nil for a
    /// code the reference does not list.
    public static func error(_ code: String, details: String? = nil, trace: String? = nil) -> V2EnhancedError? {
        guard let (status, action) = entries[code] else { return nil }
        let message = code.split(separator: "_").joined(separator: " ").capitalizedFirst + "."
        return V2EnhancedError(
            status: status, code: code, message: message, details: details,
            helpURL: "https://experienceleague.adobe.com/docs/pass/authentication/auth-features/error-reportn/enhanced-error-codes.html",
            trace: trace, action: action)
    }
}

extension String {
    /// The text with its first letter in upper case.
    fileprivate var capitalizedFirst: String { prefix(1).uppercased() + dropFirst() }
}
